import { needsWorker } from "../engine/run-predicates";
import { ConflictError } from "../errors";
import { parkForApproval } from "../store/runs/approvals";
import { admitAttempt } from "../metering/admission";
import { expireAttempt, startAttempt, type StartResult } from "../store/runs/attempts";
import { hasOpenAttempt, needsApproval, readRunSnapshot, type StartBasis } from "../store/runs/start-basis";
import { isWorkerStopped } from "../store/runs/worker-registry";
import { continueWithNewest, type ContinueResult } from "./continue-with-newest";
import { acquireLease, leaseHolder, leaseTokenWorker, newLeaseToken, releaseLeaseOf, type Lease } from "./lease";
import { runBegunAttempt, type AttemptEnd } from "./run-attempt";
import type { RunnerContext } from "./runner-context";
import { DrainingError, type Slot } from "./slots";

/**
 * The job of one Run: move it one step. A Waiting or closed Run needs nothing; a Pending Run
 * whose Loop asks for approval is parked; any other Run that needs a worker gets a slot (older
 * Events first), then the Run's lease, then its next Attempt — started only on the version of
 * the Run it was decided on, so a Run changed before the lease was taken is read and decided
 * again under it. After a RetryAttempt decision the Run goes back to the queue for a new slot;
 * once it closes, the newest Event queued behind it gets its turn.
 */

/** How long a Run refused by a quota waits before asking the gate again, at most. */
const QUOTA_RECHECK_S = 300;

export type MoveOutcome =
  /** Nothing to do: the Run is closed, Waiting, or gone. */
  | { tag: "Idle"; reason: string }
  /** Parked on its approval gate; the approval moves it again. */
  | { tag: "Parked" }
  /** Another worker holds the Run (its lease), or an open Attempt waits for the orphan sweep. */
  | { tag: "Held"; reason: "lease_held" | "open_attempt" }
  /** Move it again later: an automatic retry (a new slot), this worker is draining, the Run changed under this job, the move failed inside Atelier or met an outage (engine-failure.ts). */
  | { tag: "Again"; reason: "retry" | "draining" | "changed" | "quota" | "engine_failure" | "outage"; delayMs: number }
  | { tag: "Attempted"; attemptId: string; end: AttemptEnd["tag"]; continued: ContinueResult | null };

/** A draining worker hands the job back a little later, for a worker that admits. */
export const DRAINING_DELAY_MS = 1_000;

/** Moves a Run one step: reads it, decides, and starts its next Attempt where the decision says so. */
export async function moveRun(ctx: RunnerContext, runId: string): Promise<MoveOutcome> {
  const outcome = await moveOnce(ctx, runId);
  if (!mayHaveChangedMeanwhile(outcome)) return outcome;
  // While this job ran, someone may have changed the Run and asked to move it (the sweep closing
  // an orphan this job saw open, an operator's retry while the condition was re-checked): the
  // queue drops that ask while this job is active, so one more read closes the gap.
  const snap = await readRunSnapshot(ctx.deps.db, runId);
  if (snap && needsWorker(snap.run.state) && !hasOpenAttempt(snap)) return { tag: "Again", reason: "changed", delayMs: RECHECK_DELAY_MS };
  return outcome;
}

/**
 * Whether a change made while this job ran could have been dropped by the queue: it held or
 * skipped the Run, or it ran an Attempt — an operator's retry of the Run that Attempt failed may
 * come while this job still cleans up its workspace or re-checks the condition (seconds on a busy
 * machine). Only the few milliseconds between this read and the job's end are left to the
 * reconcile.
 */
function mayHaveChangedMeanwhile(outcome: MoveOutcome): boolean {
  return outcome.tag === "Held" || outcome.tag === "Idle" || outcome.tag === "Attempted";
}

/** How soon a Run that changed under its job is moved again. */
export const RECHECK_DELAY_MS = 250;

/** An Attempt that closed its Run; `queuedBehind`: Events may wait behind it (unknown after a cancel). */
type Closed = { tag: "Closed"; attemptId: string; end: AttemptEnd["tag"]; loop: string; itemKey: string; queuedBehind: boolean };

/** What a read of the Run says to do with it. */
type MoveDecision =
  | Extract<MoveOutcome, { tag: "Idle" } | { tag: "Held" }>
  | { tag: "Park" }
  | { tag: "Start"; snap: StartBasis };

function decideMove(snap: StartBasis | null): MoveDecision {
  if (!snap) return { tag: "Idle", reason: "run_not_found" };
  if (needsApproval(snap.run)) return { tag: "Park" };
  if (!needsWorker(snap.run.state)) return { tag: "Idle", reason: snap.run.state };
  // an open Attempt: only its lease holder, or the orphan sweep once the lease expired, moves the Run
  if (hasOpenAttempt(snap)) return { tag: "Held", reason: "open_attempt" };
  return { tag: "Start", snap };
}

/** Acts on a decision that starts nothing. */
const withoutAttempt = (ctx: RunnerContext, runId: string, decision: Exclude<MoveDecision, { tag: "Start" }>): Promise<MoveOutcome> | MoveOutcome =>
  decision.tag === "Park" ? park(ctx, runId) : decision;

async function moveOnce(ctx: RunnerContext, runId: string): Promise<MoveOutcome> {
  const decision = decideMove(await readRunSnapshot(ctx.deps.db, runId));
  if (decision.tag !== "Start") return withoutAttempt(ctx, runId, decision);

  let slot: Slot;
  try {
    slot = await ctx.slots.acquire(decision.snap.run.received_at);
  } catch (err) {
    if (err instanceof DrainingError) return { tag: "Again", reason: "draining", delayMs: DRAINING_DELAY_MS };
    throw err;
  }
  let next: MoveOutcome | Closed;
  try {
    const lease = (await takeLease(ctx, runId)) ?? (await takeFromStoppedHolder(ctx, runId));
    if (!lease) return { tag: "Held", reason: "lease_held" };
    next = await underLease(ctx, decision.snap, lease);
  } finally {
    slot.release();
  }
  if (next.tag !== "Closed") return next;
  const continued = next.queuedBehind ? await continueWithNewest({ ...ctx.deps, ...recheckOptions(ctx) }, next) : NOTHING_QUEUED;
  return { tag: "Attempted", attemptId: next.attemptId, end: next.end, continued };
}

const NOTHING_QUEUED: ContinueResult = { tag: "NothingQueued" };

/** The Run's lease for this worker, its token naming the worker; null when it is held. */
const takeLease = (ctx: RunnerContext, runId: string): Promise<Lease | null> =>
  acquireLease(ctx.deps.redis, ctx.names.lease(runId), { ttlMs: ctx.config.leaseTtlMs }, newLeaseToken(ctx.config.workerId));

/**
 * The Run's lease is held by a worker the registry holds as stopped: it died after it took the
 * lease and before its Attempt began (a begun Attempt holds the Run by its row, before any lease
 * is asked for). Its key is deleted (compare-and-delete on its token) and taken now, rather
 * than waited out for a TTL. A holder that is only silent (another host) is waited out.
 */
async function takeFromStoppedHolder(ctx: RunnerContext, runId: string): Promise<Lease | null> {
  const key = ctx.names.lease(runId);
  const holder = await leaseHolder(ctx.deps.redis, key);
  const worker = holder === null ? null : leaseTokenWorker(holder);
  if (holder === null || worker === null || !(await isWorkerStopped(ctx.deps.db, worker))) return null;
  if (!(await releaseLeaseOf(ctx.deps.redis, key, holder))) return null;
  ctx.log.warn({ run_id: runId, worker }, "took the lease of a Run from a stopped worker");
  return takeLease(ctx, runId);
}

const recheckOptions = (ctx: RunnerContext) => ({
  log: ctx.log,
  ...(ctx.config.recheckTimeoutMs !== undefined ? { recheckTimeoutMs: ctx.config.recheckTimeoutMs } : {}),
});

async function park(ctx: RunnerContext, runId: string): Promise<MoveOutcome> {
  try {
    await parkForApproval(ctx.deps.db, runId);
    return { tag: "Parked" };
  } catch (err) {
    if (err instanceof ConflictError) return { tag: "Idle", reason: "state_changed" };
    throw err;
  }
}

/** How many times a Run that keeps changing under the start is read and decided again. */
const START_TRIES = 5;

/**
 * The Attempt's start on the version of the Run it was decided on, now that this worker holds
 * the lease: a Run changed meanwhile (by an operator, the sweep, another worker) is read and
 * decided again.
 */
async function startUnderLease(ctx: RunnerContext, snap: StartBasis, lease: Lease): Promise<Exclude<StartResult, { tag: "Changed" }> | MoveOutcome> {
  const holder = { token: lease.token, workerId: ctx.config.workerId };
  const reserve = ctx.config.roster.concurrencyReserve ?? 0;
  const admit: typeof admitAttempt = (on, runId, known) => admitAttempt(on, runId, known, reserve);
  let begun = await startAttempt(ctx.deps.db, snap, holder, admit);
  for (let tries = 1; ; tries++) {
    if (begun.tag !== "Changed") return begun;
    if (tries === START_TRIES) return { tag: "Again", reason: "changed", delayMs: RECHECK_DELAY_MS };
    const decision = decideMove(begun.snapshot);
    if (decision.tag !== "Start") return withoutAttempt(ctx, snap.run.id, decision);
    begun = await startAttempt(ctx.deps.db, decision.snap, holder, admit);
  }
}

/** The Attempt, while this worker holds the Run's lease. */
async function underLease(
  ctx: RunnerContext,
  snap: StartBasis,
  lease: Lease,
): Promise<MoveOutcome | Closed> {
  const runId = snap.run.id;
  /** leave the key to expire instead of deleting it */
  let leaveLease = false;
  const local = ctx.local.add(runId);
  try {
    let begun;
    try {
      begun = await startUnderLease(ctx, snap, lease);
    } catch (err) {
      if (err instanceof ConflictError) return { tag: "Idle", reason: "state_changed" };
      throw err;
    }
    if (begun.tag !== "Started" && begun.tag !== "Refused") return begun;
    if (begun.tag === "Refused") {
      // the admission gate: the Run keeps its state and says why; ask again later
      const after = Math.min(begun.refusal.retryAfterSeconds ?? QUOTA_RECHECK_S, QUOTA_RECHECK_S);
      return { tag: "Again", reason: "quota", delayMs: after * 1000 };
    }
    ctx.log.info({ run_id: runId, attempt_id: begun.attempt.id, worker: ctx.config.workerId }, "attempt started");
    const end = await runBegunAttempt(ctx, begun.run, begun.attempt, lease, local);
    ctx.log.info({ run_id: runId, attempt_id: begun.attempt.id, end: end.tag, ...(end.tag === "Recorded" ? { decision: end.finish.decision.tag } : {}) }, "attempt ended");
    const closed: Closed = {
      tag: "Closed",
      attemptId: begun.attempt.id,
      end: end.tag,
      loop: begun.run.loop,
      itemKey: begun.run.item_key,
      queuedBehind: end.tag === "Recorded" ? end.finish.queuedBehind : true,
    };
    if (end.tag === "Abandoned") {
      if (end.reason === "lease_expired") return closeOwn(ctx, begun.attempt.id, closed, ranOutMessage(ctx.config.workerId));
      if (end.reason === "handed_over") return closeOwn(ctx, begun.attempt.id, closed, handedOverMessage(ctx.config.workerId));
      // a hard stop leaves the lease to expire: the next start (or another worker's sweep) recovers the Attempt
      leaveLease = end.reason === "stopping";
      return { tag: "Held", reason: "open_attempt" };
    }
    if (end.tag === "Recorded" && end.finish.decision.tag === "RetryAttempt") return { tag: "Again", reason: "retry", delayMs: 0 };
    // nothing moves a Succeeded Run again: its lease expires by itself, which saves a round trip per Run
    leaveLease = end.tag === "Recorded" && end.finish.decision.tag === "Succeeded";
    return closed;
  } finally {
    ctx.local.remove(local);
    if (leaveLease) lease.abandon();
    else await lease.release();
  }
}

const ranOutMessage = (workerId: string) =>
  `The worker running this Attempt (${workerId}) could not renew its lease for a whole lease TTL (Redis did not answer): it stopped the agent and closed the Attempt so that it is retried.`;

const handedOverMessage = (workerId: string) =>
  `The worker running this Attempt (${workerId}) was drained (a deploy or a restart) and the Attempt outlived the drain: it stopped the agent, kept its session and handed the Attempt over, to be resumed.`;

/**
 * This live worker stopped its agent and closes the Attempt itself as interrupted, an
 * InfraFailure (lease_lost), rather than leaving it to the sweep's second look one TTL later:
 * its lease ran out (no other worker can hold the Attempt: a start needs it closed), or it hands
 * the Attempt over as it drains (its session kept). Closed meanwhile (the sweep, a cancel):
 * held, and the Run read again.
 */
async function closeOwn(ctx: RunnerContext, attemptId: string, closed: Closed, message: string): Promise<MoveOutcome | Closed> {
  const expired = await expireAttempt(ctx.deps.db, attemptId, message);
  if (!expired) return { tag: "Held", reason: "open_attempt" };
  ctx.log.warn({ attempt_id: attemptId, decision: expired.decision.tag }, "closed its own interrupted Attempt");
  return expired.decision.tag === "RetryAttempt" ? { tag: "Again", reason: "retry", delayMs: 0 } : closed;
}
