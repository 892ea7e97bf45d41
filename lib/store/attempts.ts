import { countAttemptOutcome, countRunTransition } from "../metrics/metrics";
import { attemptId as attemptIdOf, AGENT_STEP } from "../engine/ids";
import { infraFailure, type Failure } from "../engine/failure";
import { decideAfterFailure, type RetryDecision } from "../engine/retry";
import { needsWorker } from "../engine/run-predicates";
import { TRANSITIONS, type Transition } from "../engine/run-state";
import { ConflictError, NotFoundError } from "../errors";
import { addAttemptUsageSql } from "./usage-counters";
import { startAttempts, writeStarts, type StartCall, type StartedRun } from "./attempt-starts";
import { recordOutcome, writeOutcomes, type OutcomeCall, type OutcomeRow, type Usage } from "./attempt-outcomes";
import { recordIfTerminal } from "./terminal-deliveries";
import { announce } from "./announce";
import type { Db } from "./db";
import { announceRunsChanged, markRunsChanged } from "./run-changed";
import { guardedRunUpdate, lockRun, touchRun, type RunRow } from "./run-rows";
import { hasOpenAttempt, readRunSnapshot, type RunSnapshot, type StartBasis } from "./run-snapshot";
import { transaction, type Sql } from "./transaction";
import { first, query, sql } from "./sql";
import { TRANSCRIPT_CHANNEL, type TranscriptLine } from "./transcript-lines";

export interface AttemptRef {
  id: string;
  runId: string;
  number: number;
  leaseToken: string;
}

/** The admission gate's refusal of a start: its token, a sentence, and when asking again may succeed. */
export interface StartRefusal {
  token: string;
  message: string;
  retryAfterSeconds: number | null;
}

/**
 * The admission gate for an Attempt's start (lib/metering/admission.ts admitAttempt), passed
 * in as recordAndClaim takes the open's: asked in the start's transaction, given what the
 * caller read of the Run (locked).
 */
export type AttemptGate = (sql: Sql, runId: string, known: { repo: string; waitingReason: string | null }) => Promise<StartRefusal | null>;

export type StartResult =
  | { tag: "Started"; attempt: AttemptRef; run: StartedRun }
  /** the admission gate said no: the Run keeps its state and says why (waiting_reason) */
  | { tag: "Refused"; run: StartBasis["run"]; refusal: StartRefusal }
  /** the Run is no longer the version the start was decided on: decide again on this read */
  | { tag: "Changed"; snapshot: RunSnapshot | null };

/** The message an Attempt gets when its worker stopped holding the lease. */
const LEASE_EXPIRED = "The worker running this Attempt stopped renewing its lease (it died or lost Redis).";

/**
 * Starts the next Attempt of a Run under a fresh lease token, as decided on `snap`: the first
 * Attempt of a Pending or Queued Run, or Attempt n+1 of a Running Run after an automatic or
 * operator retry (the caller saw no open Attempt). A Run changed since `snap` starts nothing
 * and is read again (`Changed`). Where the admission gate has something to ask (a quota, a
 * suspension), it is asked first, in one transaction with the start under the Run's lock and
 * the installation's concurrency lock, so two starts cannot both take the last slot; a Run
 * the gate refuses keeps its state and says why. Elsewhere the start is one statement.
 */
export async function startAttempt(db: Db, snap: StartBasis, lease: { token: string; workerId: string }, gate: AttemptGate): Promise<StartResult> {
  const { run } = snap;
  if (!needsWorker(run.state)) {
    throw new ConflictError("run_state_conflict", `Cannot start an Attempt of a Run that is ${run.state}.`, { state: run.state });
  }
  if (hasOpenAttempt(snap)) {
    throw new ConflictError("attempt_open", `Attempt ${snap.latest!.id} of this Run is still open.`, { attempt: snap.latest!.id });
  }
  const number = (snap.latest?.number ?? 0) + 1;
  const id = attemptIdOf(run.id, AGENT_STEP, number);
  const { from } = run.state === "Running" ? TRANSITIONS.continueRunning : TRANSITIONS.start;
  const call: StartCall = { id, runId: run.id, number, lease, from, version: snap.version };
  const started = (row: StartedRun): StartResult => ({ tag: "Started", attempt: { id, runId: run.id, number, leaseToken: lease.token }, run: row });
  const changed = async (): Promise<StartResult> => ({ tag: "Changed", snapshot: await readRunSnapshot(db, run.id) });

  if (!snap.admissionGated) {
    const row = await startAttempts(db)(call);
    if (!row) return changed();
    announceRunsChanged(db.pool, [run.id]);
    if (run.state !== "Running") countRunTransition("Running");
    return started(row);
  }
  const gated = await transaction(
    db,
    async (tx): Promise<StartResult | null> => {
      const locked = await first<{ version: string }>(tx, sql`SELECT xmin::text AS version FROM runs WHERE id = ${run.id} FOR UPDATE`);
      if (locked?.version !== snap.version) return null;
      const refusal = await gate(tx, run.id, { repo: run.repo, waitingReason: run.waiting_reason });
      if (refusal) return { tag: "Refused", run, refusal };
      const [row] = await writeStarts(tx, [{ ...call, version: null }]);
      await markRunsChanged(tx, [run.id]);
      return started(row!);
    },
    { indexPlanned: true },
  );
  if (gated?.tag === "Started" && run.state !== "Running") countRunTransition("Running");
  return gated ?? changed();
}

export type AttemptResult =
  | {
      tag: "Succeeded";
      summary: string | null;
      usage: Usage;
      branch: string | null;
      pullRequestNumber: number | null;
      headSha: string | null;
    }
  | { tag: "Failed"; failure: Failure; usage: Usage };

export interface FinishResult {
  run: RunRow;
  decision: RetryDecision | { tag: "Succeeded" };
  /**
   * An Event was queued behind the Run before this outcome was recorded (read under the Run's
   * row lock, which the queuing transaction writes): the newest one gets its turn.
   */
  queuedBehind: boolean;
}

/** How an outcome moves the Run: its decision, and the engine's Transition (the states it moves from, the state it writes). */
interface RunMove {
  decision: FinishResult["decision"];
  transition: Transition;
}

function runMoveOf(result: AttemptResult, number: number): RunMove {
  if (result.tag === "Succeeded") return { decision: { tag: "Succeeded" }, transition: TRANSITIONS.succeed };
  const decision = decideAfterFailure(result.failure, number);
  return { decision, transition: decision.tag === "RetryAttempt" ? TRANSITIONS.continueRunning : TRANSITIONS.fail };
}

/** The outcome as the statement that records it takes it (attempt-outcomes.ts). */
function outcomeCall(ref: AttemptRef, result: AttemptResult, move: RunMove, tail: readonly TranscriptLine[]): OutcomeCall {
  const succeeded = result.tag === "Succeeded" ? result : null;
  const { usage } = result;
  return {
    attemptId: ref.id,
    runId: ref.runId,
    leaseToken: ref.leaseToken,
    result: result.tag,
    from: move.transition.from,
    to: move.transition.to,
    ends: move.decision.tag !== "RetryAttempt",
    failure: result.tag === "Failed" ? result.failure : null,
    summary: succeeded?.summary ?? null,
    branch: succeeded?.branch ?? null,
    pullRequestNumber: succeeded?.pullRequestNumber ?? null,
    headSha: succeeded?.headSha ?? null,
    usage: {
      durationMs: usage.durationMs,
      tokensIn: usage.tokensIn,
      tokensOut: usage.tokensOut,
      costUsd: usage.costUsd,
      costEstimated: usage.costEstimated,
      costExact: usage.costExact ?? false,
      model: usage.model ?? null,
      turns: usage.turns ?? null,
      sessionId: usage.sessionId ?? null,
    },
    tail,
  };
}

/** The Run an outcome moved; the typed refusal when it wrote nothing (which asks why, off the hot path). */
async function movedRun(on: Sql | Db["pool"], ref: AttemptRef, row: OutcomeRow | null, move: RunMove): Promise<RunRow> {
  if (!row) throw new NotFoundError("run_not_found", `No Run ${ref.runId}.`);
  if (row.id) {
    const { current_state: _s, hooked: _h, queued_behind: _q, ...run } = row;
    return run as RunRow;
  }
  const lease = await first<{ holds: boolean }>(
    on,
    sql`SELECT EXISTS (SELECT 1 FROM attempts WHERE id = ${ref.id} AND state = 'Running' AND lease_token = ${ref.leaseToken}) AS holds`,
  );
  if (!lease!.holds) throw new ConflictError("lease_lost", `Attempt ${ref.id} no longer holds its lease; its outcome was not recorded.`);
  throw new ConflictError(
    "run_state_conflict",
    `Cannot record an outcome of a Run that is ${row.current_state}; it must be ${move.transition.from.join(" or ")}.`,
    { state: row.current_state, allowed: move.transition.from },
  );
}

/**
 * Records an Attempt's outcome, fenced by its lease token: a worker that lost its lease (the
 * Attempt was closed or re-run by someone else) writes nothing and gets `lease_lost`. `tail`,
 * the transcript lines not stored yet, is stored with it (even when the outcome is refused).
 * One statement, group-committed with the outcomes other Attempts of this process report
 * meanwhile (recordOutcome); a transaction of its own where outbound hooks listen to the Run,
 * so that a terminal state and its deliveries are written together.
 */
export async function finishAttempt(db: Db, ref: AttemptRef, result: AttemptResult, tail: readonly TranscriptLine[] = []): Promise<FinishResult> {
  const move = runMoveOf(result, ref.number);
  const call = outcomeCall(ref, result, move, tail);
  const alone = await recordOutcome(db)(call);
  if (!alone?.hooked) {
    if (tail.length) announce(db.pool, TRANSCRIPT_CHANNEL, [ref.runId]);
    const run = await movedRun(db.pool, ref, alone, move);
    announceRunsChanged(db.pool, [ref.runId]);
    return countedFinish(result, move, { run, decision: move.decision, queuedBehind: alone!.queued_behind });
  }
  const recorded = await transaction(
    db,
    async (tx) => {
      const [row] = await writeOutcomes(tx, [call], true);
      const run = await movedRun(tx, ref, row!, move);
      await markRunsChanged(tx, [ref.runId]);
      await recordIfTerminal(tx, run, move.transition.from);
      return { run, decision: move.decision, queuedBehind: row!.queued_behind };
    },
    { indexPlanned: true },
  );
  if (tail.length) announce(db.pool, TRANSCRIPT_CHANNEL, [ref.runId]);
  return countedFinish(result, move, recorded);
}

/** The metrics of a recorded outcome: the Attempt's, and the Run's move unless it goes on Running. */
function countedFinish(result: AttemptResult, move: RunMove, finish: FinishResult): FinishResult {
  countAttemptOutcome(result.tag, result.tag === "Failed" ? result.failure.category : null, result.usage.durationMs);
  if (move.decision.tag !== "RetryAttempt") countRunTransition(finish.run.state);
  return finish;
}

/** Records the branch and pull request an Attempt produced as soon as it is known. */
export async function recordPullRequest(db: Db, runId: string, pr: { branch: string; number: number; headSha: string }) {
  await query(
    db.pool,
    sql`UPDATE runs SET branch = ${pr.branch}, pull_request_number = ${pr.number}, head_sha = ${pr.headSha}, updated_at = now() WHERE id = ${runId}`,
  );
  announceRunsChanged(db.pool, [runId]);
}

/** Closes an open Attempt whose worker will report nothing, as failed; its minutes count on the month's counters. */
async function closeLostAttempt(tx: Sql, id: string, failure: Failure): Promise<void> {
  await query(
    tx,
    sql`WITH closed AS (
       UPDATE attempts SET state = 'Failed', ended_at = now(), failure_kind = ${failure.kind}, failure_category = ${failure.category},
              retryable = ${failure.retryable}, failure_message = ${failure.message},
              duration_ms = (EXTRACT(EPOCH FROM now() - started_at) * 1000)::int
        WHERE id = ${id} AND state = 'Running'
       RETURNING id, run_id, cost_usd, duration_ms
     ), failed AS (
       UPDATE runs SET failed_attempt_id = closed.id FROM closed WHERE runs.id = closed.run_id
     )${addAttemptUsageSql("closed")}`,
  );
}

/** Closes a Run's open Attempt as Canceled (operator cancel), its minutes counted; returns its id. */
export async function cancelOpenAttempt(tx: Sql, runId: string): Promise<string | null> {
  const closed = await first<{ id: string }>(
    tx,
    sql`WITH closed AS (
       UPDATE attempts SET state = 'Canceled', ended_at = now(), duration_ms = (EXTRACT(EPOCH FROM now() - started_at) * 1000)::int
        WHERE run_id = ${runId} AND state = 'Running'
       RETURNING id, run_id, cost_usd, duration_ms
     ), counted AS (${addAttemptUsageSql("closed")}
     )
     SELECT id FROM closed`,
  );
  return closed?.id ?? null;
}

/**
 * Closes an Attempt whose lease expired or whose worker died (found by the sweep) as an
 * InfraFailure (`lease_lost`, retryable), with `message` saying why; the Run goes on or fails.
 */
export async function expireAttempt(db: Db, attemptId: string, message: string = LEASE_EXPIRED): Promise<{ run: RunRow; decision: RetryDecision } | null> {
  return transaction(db, async (tx) => {
    const row = await first<{ run_id: string; number: number }>(tx, sql`SELECT run_id, number FROM attempts WHERE id = ${attemptId} AND state = 'Running'`);
    if (!row) return null;
    await lockRun(tx, row.run_id);
    const lost = infraFailure("lease_lost", message);
    await closeLostAttempt(tx, attemptId, lost);
    const decision = decideAfterFailure(lost, row.number);
    const run =
      decision.tag === "RetryAttempt"
        ? await touchRun(tx, row.run_id)
        : await guardedRunUpdate(tx, row.run_id, TRANSITIONS.fail, sql`ended_at = now()`, "fail");
    countAttemptOutcome("Failed", lost.category, null);
    return { run, decision };
  });
}
