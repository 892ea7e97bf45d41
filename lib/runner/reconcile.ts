import type { Redis } from "ioredis";
import { listLeftoverWorktrees, salvageOrRemove, type SalvageOutcome } from "../executor/leftover-worktrees";
import { expireAttempt } from "../store/attempts";
import { orphanSuspects, type OrphanSuspect } from "../store/attempt-sweep";
import { activeRunsToMove, strandedQueues } from "../store/runs-to-move";
import { continueWithNewest, type ContinueDeps } from "./continue-with-newest";
import { DEFAULT_LEASE_TTL_MS, leaseHolders } from "./lease";
import { DEFAULT_KEY_PREFIX, redisNames } from "./redis-names";
import { SILENT_LOG, type RunnerGitHub } from "./runner-deps";

/**
 * Postgres is the truth; Redis holds what can be rebuilt. At worker start and every few
 * minutes: every Run that should be moving gets its job again (the queue deduplicates; the
 * lease, and a start written only on the version it was decided on, make a second job
 * harmless), the Events stranded
 * behind a closed Run get their turn, and Attempts whose lease is gone are closed as
 * InfraFailures so their Runs go on.
 */

export interface ReconcileResult {
  /** Runs whose job was enqueued again. */
  moved: number;
  /** (Loop, Item) pairs whose queued Events were given their turn. */
  continued: number;
}

export async function reconcile(deps: ContinueDeps & { graceMs?: number }): Promise<ReconcileResult> {
  const log = deps.log ?? SILENT_LOG;
  // every Run a worker moves (Pending, Queued, Running); a Waiting Run gets its job from the approval
  const runs = await activeRunsToMove(deps.db);
  for (const run of runs) await deps.workQueue.moveRun(run.id, { receivedAt: run.received_at });

  // queued Events whose Run closed (a worker died between the close and continueWithNewest, or
  // an operator canceled a Run whose worker was gone); a Run that closed within the grace period
  // may still be continuing on its worker
  const stranded = await strandedQueues(deps.db, deps.graceMs ?? DEFAULT_LEASE_TTL_MS);
  let continued = 0;
  for (const s of stranded) {
    const r = await continueWithNewest(deps, { loop: s.loop, itemKey: s.item_key });
    if (r.tag !== "NothingQueued") continued++;
  }
  if (runs.length || continued) log.info({ moved: runs.length, continued }, "reconciled");
  return { moved: runs.length, continued };
}

export interface SweepDeps extends ContinueDeps {
  redis: Redis;
  keyPrefix?: string;
  leaseTtlMs: number;
  /** How long a missing lease must stay missing before its Attempt is closed (default one TTL). */
  confirmMs?: number;
  /** How long a silent worker counts as alive in the registry (default one lease TTL). */
  staleAfterMs?: number;
}

/** Why the sweep closed an Attempt: its worker is dead in the registry, or its lease stayed missing. */
const workerDied = (workerId: string) =>
  `The worker running this Attempt (${workerId}) stopped heartbeating and its lease expired: it died, and the Attempt is retried by a live worker.`;

/**
 * Closes an open Attempt nobody will report on as an InfraFailure (lease_lost), and moves its
 * Run on: moved again, or, when that was its third Attempt, failed with the queued Events given
 * their turn. False when it had closed meanwhile.
 */
export async function closeOrphan(deps: ContinueDeps, attemptId: string, message?: string): Promise<boolean> {
  const result = await expireAttempt(deps.db, attemptId, message);
  if (!result) return false;
  (deps.log ?? SILENT_LOG).warn({ attempt_id: attemptId, decision: result.decision.tag }, "closed an Attempt whose worker stopped holding its lease");
  if (result.decision.tag === "RetryAttempt") {
    await deps.workQueue.moveRun(result.run.id, { receivedAt: result.run.received_at });
  } else {
    await continueWithNewest(deps, { loop: result.run.loop, itemKey: result.run.item_key });
  }
  return true;
}

/**
 * Orphan sweep: a Running Attempt older than one TTL whose Run's lease is not held by its
 * token is closed as an InfraFailure (lease_lost) and its Run goes on. When the registry says
 * its worker is dead (no heartbeat for the stale window), that is closed at once: a dead
 * worker sets no key again. Otherwise it is looked at again every third of a TTL for one
 * confirmation window (a live holder whose key Redis lost — FLUSHALL — sets it again within a
 * third of the TTL, and is let be): closed as soon as the registry says its worker died, or
 * at the window's end if its lease is still not held. Returns the Attempts closed.
 */
export async function sweepOrphans(deps: SweepDeps): Promise<string[]> {
  const names = redisNames(deps.keyPrefix ?? DEFAULT_KEY_PREFIX);
  const window = { olderThanMs: deps.leaseTtlMs, staleAfterMs: deps.staleAfterMs ?? deps.leaseTtlMs };
  const unheld = async (candidates: OrphanSuspect[]) => {
    const holders = await leaseHolders(deps.redis, candidates.map((a) => names.lease(a.run_id)));
    return candidates.filter((a, i) => holders[i] !== a.lease_token);
  };
  const expired: string[] = [];
  const closeDead = async (suspects: OrphanSuspect[]) => {
    for (const a of suspects.filter((s) => s.worker_dead)) {
      if (await closeOrphan(deps, a.id, workerDied(a.worker_id ?? "unknown"))) expired.push(a.id);
    }
    return suspects.filter((s) => !s.worker_dead);
  };
  let unsure = await closeDead(await unheld(await orphanSuspects(deps.db, window)));
  const confirmAt = Date.now() + (deps.confirmMs ?? deps.leaseTtlMs);
  while (unsure.length && Date.now() < confirmAt) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(deps.leaseTtlMs / 3, confirmAt - Date.now())));
    // the same Attempts, read again: still open and unheld, and dead in the registry by now?
    const waiting = new Set(unsure.map((a) => a.id));
    unsure = await closeDead(await unheld((await orphanSuspects(deps.db, window)).filter((a) => waiting.has(a.id))));
  }
  // a worker that could not record an outcome (the database away) left its reason
  const reasons = unsure.length ? await deps.redis.mget(...unsure.map((a) => names.unrecordedOutcome(a.id))) : [];
  for (const [i, a] of unsure.entries()) {
    if (await closeOrphan(deps, a.id, reasons[i] ?? undefined)) expired.push(a.id);
  }
  return expired;
}

/**
 * Before the first reconcile of a worker start: the worktrees an earlier process left behind
 * are salvaged (their work pushed to the Run's branch, so a retry continues from it) or removed.
 */
export async function recoverWorkspaces(
  deps: { github: Pick<RunnerGitHub, "mintToken">; log?: ContinueDeps["log"] },
  workspaceRoot: string,
): Promise<SalvageOutcome[]> {
  const log = deps.log ?? SILENT_LOG;
  const outcomes: SalvageOutcome[] = [];
  for (const leftover of await listLeftoverWorktrees(workspaceRoot)) {
    const outcome = await salvageOrRemove(leftover, {
      token: async (repo) => (await deps.github.mintToken(repo)).token,
    }).catch((err: unknown): SalvageOutcome => ({ tag: "Skipped", name: leftover.name, reason: err instanceof Error ? err.message : String(err) }));
    log.info({ worktree: leftover.name, outcome: outcome.tag }, "recovered a leftover worktree");
    outcomes.push(outcome);
  }
  return outcomes;
}
