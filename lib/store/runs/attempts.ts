import { countAttemptOutcome, countRunTransition, metrics } from "../../metrics/metrics";
import { attemptId as attemptIdOf, AGENT_STEP } from "../../engine/ids";
import { infraFailure, type Failure } from "../../engine/failure";
import { decideAfterFailure, type RetryDecision } from "../../engine/retry";
import { needsWorker } from "../../engine/run-predicates";
import { TRANSITIONS, type RunStateName, type Transition } from "../../engine/run-state";
import { ConflictError, NotFoundError } from "../../errors";
import { addAttemptUsageSql } from "../metering/usage-counter-sql";
import { QUOTA_WAITING_PREFIX } from "../metering/repo-metering";
import { hasOutboundHooks, recordIfTerminal } from "../outbound/terminal-deliveries";
import { announce } from "../kernel/announce";
import { FORGET_ENGINE_FAILURES } from "./engine-failures";
import { recordKeptSession } from "./agent-sessions";
import { insertHeldCommitsSql, type HeldCommits } from "./held-commits";
import type { Db } from "../kernel/db";
import type { VerifyResult } from "../../executor/verify-spec";
import { announceRunsChanged, markRunsChanged } from "./run-changed";
import { guardedRunUpdate, lockRun, RUN_COLUMNS, touchRun, type RunRow } from "./run-rows";
import { hasOpenAttempt, readRunSnapshot, type RunSnapshot, type StartBasis } from "./start-basis";
import { transaction, type Sql } from "../kernel/transaction";
import { first, query, raw, sql } from "../kernel/sql";
import { TRANSCRIPT_CHANNEL, transcriptRowsSql, type TranscriptLine } from "./transcript-lines";

export interface Usage {
  durationMs: number;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: number | null;
  costEstimated: boolean;
  /** The cost is the agent's own report (or its exact tokens priced from the roster). */
  costExact?: boolean;
  /** What the agent reported: the model, its turns, and the session a retry may resume. */
  model?: string | null;
  turns?: number | null;
  sessionId?: string | null;
}

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
 * A started Run, with the App's pull request branch its Event continues (`submission.branch`,
 * ADR 0019; null when it names none), read by the start so that the Attempt needs no read of
 * its own.
 */
/** The Run as it starts, with what its Event submitted that the Attempt needs: the branch of a same-branch Loop, the verify declared. */
export type StartedRun = RunRow & {
  submitted_branch: string | null;
  /** Why the previous Attempt was interrupted (its worker died, lost its lease, or handed it over); null when it was not. */
  interrupted_by: string | null;
};

/**
 * Starts the next Attempt of a Run under a fresh lease token, as decided on `snap`: the first
 * Attempt of a Pending or Queued Run, or Attempt n+1 of a Running Run after an automatic or
 * operator retry (the caller saw no open Attempt). One transaction under the Run's row lock:
 * a Run changed since `snap` starts nothing and is read again (`Changed`); where the admission
 * gate has something to ask (a quota, a suspension), it is asked there, with the
 * installation's concurrency lock, so two starts cannot both take the last slot, and a Run
 * it refuses keeps its state and says why. Admitted, the Run drops its quota waiting reason.
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
  // seconds from the trigger to the agent's first start, when this start is the Run's first
  let firstStartAfterS: number | null = null;
  const result = await transaction(db, async (tx): Promise<StartResult | null> => {
    const locked = await first<{ version: string; first_start_after_s: number | null }>(
      tx,
      sql`SELECT xmin::text AS version, CASE WHEN started_at IS NULL THEN EXTRACT(EPOCH FROM now() - received_at)::float8 END AS first_start_after_s
            FROM runs WHERE id = ${run.id} FOR UPDATE`,
    );
    if (locked?.version !== snap.version) return null;
    firstStartAfterS = locked.first_start_after_s;
    if (snap.admissionGated) {
      const refusal = await gate(tx, run.id, { repo: run.repo, waitingReason: run.waiting_reason });
      if (refusal) return { tag: "Refused", run, refusal };
    }
    const started = await first<StartedRun>(
      tx,
      sql`
WITH started AS (
  UPDATE runs SET state = ${TRANSITIONS.start.to}, started_at = COALESCE(started_at, now()), updated_at = now(),
         waiting_reason = CASE WHEN starts_with(waiting_reason, ${QUOTA_WAITING_PREFIX}) THEN NULL ELSE waiting_reason END
   WHERE id = ${run.id} AND state::text = ANY(${from})
  RETURNING ${raw(RUN_COLUMNS)}
), attempt AS (
  INSERT INTO attempts (id, run_id, step, number, state, lease_token, worker_id, agent)
  SELECT ${id}, id, ${AGENT_STEP}, ${number}, 'Running', ${lease.token}, ${lease.workerId}, agent FROM started
)
SELECT started.*, e.submission->>'branch' AS submitted_branch,
       (SELECT p.failure_message FROM attempts p WHERE p.run_id = started.id AND p.number = ${number - 1} AND p.failure_category = 'lease_lost') AS interrupted_by
  FROM started LEFT JOIN events e ON e.id = started.event_id`,
    );
    if (!started) return null;
    await markRunsChanged(tx, [run.id]);
    return { tag: "Started", attempt: { id, runId: run.id, number, leaseToken: lease.token }, run: started };
  });
  if (!result) return { tag: "Changed", snapshot: await readRunSnapshot(db, run.id) };
  if (result.tag === "Started" && run.state !== "Running") countRunTransition("Running");
  if (result.tag === "Started" && firstStartAfterS !== null) metrics.triggerToStart.observe(Math.max(0, firstStartAfterS));
  return result;
}

export type AttemptResult =
  | {
      tag: "Succeeded";
      summary: string | null;
      usage: Usage;
      branch: string | null;
      pullRequestNumber: number | null;
      headSha: string | null;
      /** What verify found on the pushed commit; null or absent: no verify declared. */
      verify?: VerifyResult | null;
      /** commits held off every branch for a writer's review (ADR 0058): the Run becomes Reviewing */
      held?: HeldCommits | null;
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
  if (result.tag === "Succeeded") return { decision: { tag: "Succeeded" }, transition: result.held ? TRANSITIONS.holdForReview : TRANSITIONS.succeed };
  const decision = decideAfterFailure(result.failure, number);
  return { decision, transition: decision.tag === "RetryAttempt" ? TRANSITIONS.continueRunning : TRANSITIONS.fail };
}

/** What an outcome found when it wrote nothing of the Attempt: refused after its transaction committed the transcript's tail. */
type Unrecorded = { tag: "LeaseLost" } | { tag: "WrongState"; state: RunStateName };

/**
 * Records an Attempt's outcome, fenced by its lease token: a worker that lost its lease (the
 * Attempt was closed or re-run by someone else) writes nothing and gets `lease_lost`. `tail`,
 * the transcript lines not stored yet, is stored with it (even when the outcome is refused).
 * One transaction under the Run's row lock (every writer of a Run and its Attempts locks the
 * Run first): lock, read, decide, write the Attempt, its usage, the Run's move, and — where an
 * outbound hook listens — the deliveries of a terminal state.
 */
export async function finishAttempt(db: Db, ref: AttemptRef, result: AttemptResult, tail: readonly TranscriptLine[] = []): Promise<FinishResult> {
  const move = runMoveOf(result, ref.number);
  const recorded = await transaction(db, async (tx): Promise<FinishResult | Unrecorded> => {
    const run = await first<{ state: RunStateName; queued_behind: boolean; hooked: boolean }>(
      tx,
      sql`SELECT state, queued_behind, ${raw(hasOutboundHooks("runs"))} AS hooked FROM runs WHERE id = ${ref.runId} FOR UPDATE`,
    );
    if (!run) throw new NotFoundError("run_not_found", `No Run ${ref.runId}.`);
    if (tail.length) await query(tx, transcriptRowsSql(ref.id, ref.runId, tail));
    const closed = move.transition.from.includes(run.state) && (await closeAttempt(tx, ref, result));
    if (!closed) return (await holdsLease(tx, ref)) ? { tag: "WrongState", state: run.state } : { tag: "LeaseLost" };
    const succeeded = result.tag === "Succeeded" ? result : null;
    const moved = (await first<RunRow>(
      tx,
      sql`UPDATE runs SET state = ${move.transition.to}, updated_at = now(),
                 ended_at = CASE WHEN ${move.decision.tag !== "RetryAttempt" && !succeeded?.held} THEN now() ELSE ended_at END,
                 branch = COALESCE(${succeeded?.branch ?? null}, branch),
                 pull_request_number = COALESCE(${succeeded?.pullRequestNumber ?? null}::int, pull_request_number),
                 head_sha = COALESCE(${succeeded?.headSha ?? null}, head_sha),
                 failed_attempt_id = CASE WHEN ${result.tag === "Failed"} THEN ${ref.id} ELSE failed_attempt_id END${FORGET_ENGINE_FAILURES}
           WHERE id = ${ref.runId} AND state::text = ANY(${move.transition.from})
       RETURNING ${raw(RUN_COLUMNS)}`,
    ))!;
    if (succeeded?.held) await query(tx, insertHeldCommitsSql(ref.runId, succeeded.held));
    await markRunsChanged(tx, [ref.runId]);
    if (run.hooked) await recordIfTerminal(tx, moved, move.transition.from);
    // a Reviewing Run is still open: what waits behind it waits for the writer's decision
    return { run: moved, decision: move.decision, queuedBehind: run.queued_behind && !succeeded?.held };
  });
  if (tail.length) announce(db.pool, TRANSCRIPT_CHANNEL, [ref.runId]);
  if ("tag" in recorded) throw refusalOf(ref, recorded, move);
  countAttemptOutcome(result.tag, result.tag === "Failed" ? result.failure.category : null, result.usage.durationMs);
  if (move.decision.tag !== "RetryAttempt") countRunTransition(recorded.run.state, 1, recorded.run.pull_request_number);
  return recorded;
}

/** Whether the Attempt is open under this lease token. */
async function holdsLease(tx: Sql, ref: AttemptRef): Promise<boolean> {
  return (await first(tx, sql`SELECT 1 FROM attempts WHERE id = ${ref.id} AND state = 'Running' AND lease_token = ${ref.leaseToken}`)) !== undefined;
}

/**
 * Closes the Attempt with its result, only while it is open under this lease token, and
 * counts its usage on the month's counters; false when it was not open under that lease.
 */
async function closeAttempt(tx: Sql, ref: AttemptRef, result: AttemptResult): Promise<boolean> {
  const failure = result.tag === "Failed" ? result.failure : null;
  const verify = result.tag === "Succeeded" ? (result.verify ?? null) : null;
  const { usage } = result;
  const closed = await first<{ id: string }>(
    tx,
    sql`WITH closed AS (
       UPDATE attempts SET state = ${result.tag}::"AttemptState", ended_at = now(), failure_kind = ${failure?.kind ?? null},
              failure_category = ${failure?.category ?? null}, retryable = ${failure?.retryable ?? null}, failure_message = ${failure?.message ?? null},
              summary = ${result.tag === "Succeeded" ? result.summary : null}, duration_ms = ${usage.durationMs}, tokens_in = ${usage.tokensIn},
              tokens_out = ${usage.tokensOut}, cost_usd = ${usage.costUsd}, cost_estimated = ${usage.costEstimated},
              cost_exact = ${usage.costExact ?? false}, model = ${usage.model ?? null}, turns = ${usage.turns ?? null}, session_id = ${usage.sessionId ?? null},
              verify = ${verify === null ? null : JSON.stringify(verify)}::jsonb
        WHERE id = ${ref.id} AND state = 'Running' AND lease_token = ${ref.leaseToken}
       RETURNING id, run_id, cost_usd, duration_ms
     ), counted AS (${addAttemptUsageSql("closed")}
     )
     SELECT id FROM closed`,
  );
  return closed !== undefined;
}

/** The typed refusal of an outcome that wrote nothing. */
function refusalOf(ref: AttemptRef, unrecorded: Unrecorded, move: RunMove): ConflictError {
  if (unrecorded.tag === "LeaseLost") return new ConflictError("lease_lost", `Attempt ${ref.id} no longer holds its lease; its outcome was not recorded.`);
  return new ConflictError(
    "run_state_conflict",
    `Cannot record an outcome of a Run that is ${unrecorded.state}; it must be ${move.transition.from.join(" or ")}.`,
    { state: unrecorded.state, allowed: move.transition.from },
  );
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
 * Closes an Attempt whose lease expired or whose worker died (found by the sweep), or that a
 * draining worker handed over, as an InfraFailure (`lease_lost`, retryable: it was interrupted),
 * with `message` saying why; the Run goes on or fails. The session its worker kept (ADR 0082)
 * becomes the one the next Attempt resumes.
 */
export async function expireAttempt(db: Db, attemptId: string, message: string = LEASE_EXPIRED): Promise<{ run: RunRow; decision: RetryDecision } | null> {
  return transaction(db, async (tx) => {
    const row = await first<{ run_id: string; number: number }>(tx, sql`SELECT run_id, number FROM attempts WHERE id = ${attemptId} AND state = 'Running'`);
    if (!row) return null;
    await lockRun(tx, row.run_id);
    const lost = infraFailure("lease_lost", message);
    await closeLostAttempt(tx, attemptId, lost);
    // the session its worker kept as it went: on the Attempt, and for the next one to resume
    await recordKeptSession(tx, row.run_id, attemptId);
    const decision = decideAfterFailure(lost, row.number);
    const run =
      decision.tag === "RetryAttempt"
        ? await touchRun(tx, row.run_id)
        : await guardedRunUpdate(tx, row.run_id, TRANSITIONS.fail, sql`ended_at = now()`, "fail");
    countAttemptOutcome("Failed", lost.category, null);
    return { run, decision };
  });
}
