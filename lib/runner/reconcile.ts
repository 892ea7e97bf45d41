import type { Redis } from "ioredis";
import { listLeftoverWorktrees, salvageOrRemove, type SalvageOutcome } from "../executor/leftover-worktrees";
import { expireAttempt } from "../store/runs/attempts";
import { orphanSuspects } from "../store/runs/attempt-sweep";
import { activeRunsToMove, strandedQueues } from "../store/runs/runs-to-move";
import { continueWithNewest, type ContinueDeps } from "./continue-with-newest";
import { DEFAULT_LEASE_TTL_MS, leaseHolders } from "./lease";
import { forgetSuspects, unheldForMs } from "./orphan-suspects";
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
  /** How long a missing lease must stay missing, from the sweep that first saw it so, before its Attempt is closed (default one TTL). */
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
 * Orphan sweep, one look that never waits: a Running Attempt older than one TTL whose Run's
 * lease is not held by its token is closed as an InfraFailure (lease_lost) and its Run goes on.
 * When the registry says its worker is dead (no heartbeat for the stale window), that is at
 * once: a dead worker sets no key again. Otherwise it is closed by the first sweep that finds it
 * still unheld a confirmation window (default one TTL) after a sweep first found it so, timed by
 * Redis (orphan-suspects.ts): a live holder whose key Redis lost (FLUSHALL) sets it again within
 * a third of the TTL, and is let be. Sweeps run every third of a TTL on every live worker, so
 * none holds the maintenance job while it waits. Returns the Attempts closed.
 */
export async function sweepOrphans(deps: SweepDeps): Promise<string[]> {
  const names = redisNames(deps.keyPrefix ?? DEFAULT_KEY_PREFIX);
  const confirmMs = deps.confirmMs ?? deps.leaseTtlMs;
  const suspects = await orphanSuspects(deps.db, { olderThanMs: deps.leaseTtlMs, staleAfterMs: deps.staleAfterMs ?? deps.leaseTtlMs });
  const holders = await leaseHolders(deps.redis, suspects.map((a) => names.lease(a.run_id)));
  const unheld = suspects.filter((a, i) => holders[i] !== a.lease_token);
  await forgetSuspects(deps.redis, names.orphanSuspect, suspects.filter((a, i) => holders[i] === a.lease_token).map((a) => a.id));

  const dead = unheld.filter((a) => a.worker_dead);
  const alive = unheld.filter((a) => !a.worker_dead);
  const unheldFor = await unheldForMs(deps.redis, names.orphanSuspect, alive.map((a) => a.id), confirmMs);
  const confirmed = alive.filter((_, i) => unheldFor[i]! >= confirmMs);
  // a worker that could not record an outcome (the database away) left its reason
  const reasons = confirmed.length ? await deps.redis.mget(...confirmed.map((a) => names.unrecordedOutcome(a.id))) : [];

  const expired: string[] = [];
  for (const a of dead) {
    if (await closeOrphan(deps, a.id, workerDied(a.worker_id ?? "unknown"))) expired.push(a.id);
  }
  for (const [i, a] of confirmed.entries()) {
    if (await closeOrphan(deps, a.id, reasons[i] ?? undefined)) expired.push(a.id);
  }
  await forgetSuspects(deps.redis, names.orphanSuspect, [...dead, ...confirmed].map((a) => a.id));
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
