import { countAttemptOutcome, countRunTransition } from "../metrics/metrics";
import { attemptId as attemptIdOf, AGENT_STEP } from "../engine/ids";
import { infraFailure, type Failure } from "../engine/failure";
import { decideAfterFailure, type RetryDecision } from "../engine/retry";
import { needsWorker } from "../engine/run-predicates";
import { TRANSITIONS, type RunStateName, type Transition } from "../engine/run-state";
import { ConflictError, NotFoundError } from "../errors";
import { addAttemptUsageSql, addUsageSql } from "./usage-counters";
import { QUOTA_WAITING_PREFIX } from "./repo-metering";
import { hasOutboundHooks, recordIfTerminal } from "./terminal-deliveries";
import { announce } from "./announce";
import type { Db } from "./db";
import { announceRunsChanged, markRunsChanged } from "./run-changed";
import { guardedRunUpdate, lockRun, RUN_COLUMNS, touchRun, type RunRow } from "./run-rows";
import { hasOpenAttempt, readRunSnapshot, type RunSnapshot, type StartBasis } from "./run-snapshot";
import { transaction, type Sql } from "./transaction";
import { TRANSCRIPT_CHANNEL, transcriptColumns, transcriptRowsSql, type TranscriptLine } from "./transcript-lines";

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
 * Opens Attempt n+1 and moves the Run to Running, in one statement, only while the Run is in a
 * state the start moves from and, "guarded", still the version the start was decided on (a
 * caller holding the Run's lock checked that itself: "locked"). Admitted, a Run drops its quota
 * waiting reason. Returns the Run with the branch its Event continues; no row when nothing was
 * written.
 */
const START = (version: "guarded" | "locked") => ({
  name: `atelier-start-attempt-${version}`,
  text: `
WITH started AS (
  UPDATE runs SET state = '${TRANSITIONS.start.to}', started_at = COALESCE(started_at, now()), updated_at = now(),
         waiting_reason = CASE WHEN starts_with(waiting_reason, $7) THEN NULL ELSE waiting_reason END
   WHERE id = $2 AND state::text = ANY($8)${version === "guarded" ? " AND xmin::text = $9" : ""}
  RETURNING ${RUN_COLUMNS}
), attempt AS (
  INSERT INTO attempts (id, run_id, step, number, state, lease_token, worker_id, agent)
  SELECT $1, id, $3, $4, 'Running', $5, $6, agent FROM started
)
SELECT started.*, (SELECT submission->>'branch' FROM events WHERE id = started.event_id) AS submitted_branch FROM started`,
});

/**
 * A started Run, with the App's pull request branch its Event continues (`submission.branch`,
 * ADR 0019; null when it names none), read by the start so that the Attempt needs no read of
 * its own.
 */
export type StartedRun = RunRow & { submitted_branch: string | null };

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
  const values = [id, run.id, AGENT_STEP, number, lease.token, lease.workerId, QUOTA_WAITING_PREFIX, from];
  const started = (row: StartedRun): StartResult => ({ tag: "Started", attempt: { id, runId: run.id, number, leaseToken: lease.token }, run: row });
  const changed = async (): Promise<StartResult> => ({ tag: "Changed", snapshot: await readRunSnapshot(db, run.id) });

  if (!snap.admissionGated) {
    const { rows } = await db.pool.query<StartedRun>({ ...START("guarded"), values: [...values, snap.version] });
    if (!rows[0]) return changed();
    announceRunsChanged(db.pool, [run.id]);
    if (run.state !== "Running") countRunTransition("Running");
    return started(rows[0]);
  }
  const gated = await transaction(db, async (sql): Promise<StartResult | null> => {
    const { rows: locked } = await sql.query<{ version: string }>(`SELECT xmin::text AS version FROM runs WHERE id = $1 FOR UPDATE`, [run.id]);
    if (locked[0]?.version !== snap.version) return null;
    const refusal = await gate(sql, run.id, { repo: run.repo, waitingReason: run.waiting_reason });
    if (refusal) return { tag: "Refused", run, refusal };
    const { rows } = await sql.query<StartedRun>({ ...START("locked"), values });
    await markRunsChanged(sql, [run.id]);
    return started(rows[0]!);
  });
  if (gated?.tag === "Started" && run.state !== "Running") countRunTransition("Running");
  return gated ?? changed();
}

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

/** How an outcome moves the Run: its decision, the engine's Transition (the states it moves from, the state it writes), and more columns. */
interface RunMove {
  /** names the prepared statement */
  name: "succeed" | "retry" | "fail";
  decision: FinishResult["decision"];
  transition: Transition;
  set: string;
  params: unknown[];
}

function runMoveOf(result: AttemptResult, number: number): RunMove {
  if (result.tag === "Succeeded") {
    return {
      name: "succeed",
      decision: { tag: "Succeeded" },
      transition: TRANSITIONS.succeed,
      set: `ended_at = now(), branch = COALESCE($23, branch),
            pull_request_number = COALESCE($24, pull_request_number), head_sha = COALESCE($25, head_sha)`,
      params: [result.branch, result.pullRequestNumber, result.headSha],
    };
  }
  const decision = decideAfterFailure(result.failure, number);
  return decision.tag === "RetryAttempt"
    ? { name: "retry", decision, transition: TRANSITIONS.continueRunning, set: "", params: [] }
    : { name: "fail", decision, transition: TRANSITIONS.fail, set: `ended_at = now()`, params: [] };
}

/**
 * The outcome in one statement: the Run locked first (as every writer of a Run and its
 * Attempts does), the Attempt closed only while it is still open under this lease token and
 * the Run is in a state the outcome moves from, its usage onto the month's counters, the Run
 * moved, and the last transcript lines stored. Where outbound hooks listen to the Run and the
 * statement is not `withHooks`, nothing is written: the caller records the outcome again in a
 * transaction that also writes the deliveries.
 */
const FINISH = (move: RunMove, withHooks: boolean) => ({
  // one prepared statement per shape (literals the planner folds), so a generic plan is kept
  name: `atelier-finish-${move.name}${withHooks ? "-hooked" : ""}`,
  text: `
WITH locked AS (
  SELECT id, repo, state, queued_behind, ${hasOutboundHooks("runs")} AS hooked FROM runs WHERE id = $2 FOR UPDATE
), go AS (
  SELECT 1 FROM locked WHERE ${withHooks} OR NOT hooked
), attempt AS (
  UPDATE attempts SET state = $4, ended_at = now(), failure_kind = $5, failure_category = $6, retryable = $7,
         failure_message = $8, summary = $9, duration_ms = $10, tokens_in = $11, tokens_out = $12, cost_usd = $13,
         cost_estimated = $14, cost_exact = $19, model = $20, turns = $21, session_id = $22
   WHERE id = $1 AND state = 'Running' AND lease_token = $3
     AND EXISTS (SELECT 1 FROM go) AND EXISTS (SELECT 1 FROM locked WHERE state::text = ANY($15))
  RETURNING cost_usd, duration_ms
), counted AS (${addUsageSql("(SELECT locked.repo, attempt.cost_usd, attempt.duration_ms FROM attempt, locked)")}
), moved AS (
  UPDATE runs SET state = '${move.transition.to}'${move.set ? `, ${move.set}` : ""}, updated_at = now(),
         failed_attempt_id = CASE WHEN $4::text = 'Failed' THEN $1 ELSE failed_attempt_id END
   WHERE id = $2 AND EXISTS (SELECT 1 FROM attempt)
  RETURNING ${RUN_COLUMNS}
), lines AS (
  ${transcriptRowsSql("$1", "$2", "$16", "$17", "$18")} WHERE EXISTS (SELECT 1 FROM go)
)
SELECT moved.*, locked.state AS current_state, locked.hooked, locked.queued_behind
  FROM locked LEFT JOIN moved ON true`,
});

type FinishRow = Partial<RunRow> & { current_state: RunStateName; hooked: boolean; queued_behind: boolean };

async function writeFinish(
  sql: Sql | Db["pool"],
  ref: AttemptRef,
  result: AttemptResult,
  move: RunMove,
  tail: readonly TranscriptLine[],
  withHooks: boolean,
): Promise<FinishRow | null> {
  const failure = result.tag === "Failed" ? result.failure : null;
  const { rows } = await sql.query<FinishRow>({
    ...FINISH(move, withHooks),
    values: [
      ref.id,
      ref.runId,
      ref.leaseToken,
      result.tag,
      failure?.kind ?? null,
      failure?.category ?? null,
      failure?.retryable ?? null,
      failure?.message ?? null,
      result.tag === "Succeeded" ? result.summary : null,
      result.usage.durationMs,
      result.usage.tokensIn,
      result.usage.tokensOut,
      result.usage.costUsd,
      result.usage.costEstimated,
      move.transition.from,
      ...transcriptColumns(tail),
      result.usage.costExact ?? false,
      result.usage.model ?? null,
      result.usage.turns ?? null,
      result.usage.sessionId ?? null,
      ...move.params,
    ],
  });
  return rows[0] ?? null;
}

/** The Run a finish statement moved; the typed refusal when it wrote nothing (which asks why, off the hot path). */
async function movedRun(sql: Sql | Db["pool"], ref: AttemptRef, row: FinishRow | null, move: RunMove): Promise<RunRow> {
  if (!row) throw new NotFoundError("run_not_found", `No Run ${ref.runId}.`);
  if (row.id) {
    const { current_state: _s, hooked: _h, queued_behind: _q, ...run } = row;
    return run as RunRow;
  }
  const { rows } = await sql.query<{ holds: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM attempts WHERE id = $1 AND state = 'Running' AND lease_token = $2) AS holds`,
    [ref.id, ref.leaseToken],
  );
  if (!rows[0]!.holds) throw new ConflictError("lease_lost", `Attempt ${ref.id} no longer holds its lease; its outcome was not recorded.`);
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
 * One statement; a transaction only where outbound hooks listen to the Run, so that a terminal
 * state and its deliveries are written together.
 */
export async function finishAttempt(db: Db, ref: AttemptRef, result: AttemptResult, tail: readonly TranscriptLine[] = []): Promise<FinishResult> {
  const move = runMoveOf(result, ref.number);
  const finished = async (sql: Sql | Db["pool"], withHooks: boolean) => {
    const row = await writeFinish(sql, ref, result, move, tail, withHooks);
    if (tail.length && (withHooks || !row?.hooked)) announce(db.pool, TRANSCRIPT_CHANNEL, [ref.runId]);
    return row;
  };
  const alone = await finished(db.pool, false);
  if (!alone?.hooked) {
    const run = await movedRun(db.pool, ref, alone, move);
    announceRunsChanged(db.pool, [ref.runId]);
    return countedFinish(result, move, { run, decision: move.decision, queuedBehind: alone!.queued_behind });
  }
  const recorded = await transaction(db, async (sql) => {
    const row = await finished(sql, true);
    const run = await movedRun(sql, ref, row, move);
    await markRunsChanged(sql, [ref.runId]);
    await recordIfTerminal(sql, run, move.transition.from);
    return { run, decision: move.decision, queuedBehind: row!.queued_behind };
  });
  return countedFinish(result, move, recorded);
}

/** The metrics of a recorded outcome: the Attempt's, and the Run's move unless it goes on Running. */
function countedFinish(result: AttemptResult, move: RunMove, finish: FinishResult): FinishResult {
  countAttemptOutcome(result.tag, result.tag === "Failed" ? result.failure.category : null, result.usage.durationMs);
  if (move.name !== "retry") countRunTransition(finish.run.state);
  return finish;
}

/** Records the branch and pull request an Attempt produced as soon as it is known. */
export async function recordPullRequest(db: Db, runId: string, pr: { branch: string; number: number; headSha: string }) {
  await db.pool.query(
    `UPDATE runs SET branch = $2, pull_request_number = $3, head_sha = $4, updated_at = now() WHERE id = $1`,
    [runId, pr.branch, pr.number, pr.headSha],
  );
  announceRunsChanged(db.pool, [runId]);
}

/** Closes an open Attempt whose worker will report nothing, as failed; its minutes count on the month's counters. */
async function closeLostAttempt(sql: Sql, id: string, failure: Failure): Promise<void> {
  await sql.query(
    `WITH closed AS (
       UPDATE attempts SET state = 'Failed', ended_at = now(), failure_kind = $2, failure_category = $3, retryable = $4,
              failure_message = $5, duration_ms = (EXTRACT(EPOCH FROM now() - started_at) * 1000)::int
        WHERE id = $1 AND state = 'Running'
       RETURNING id, run_id, cost_usd, duration_ms
     ), failed AS (
       UPDATE runs SET failed_attempt_id = closed.id FROM closed WHERE runs.id = closed.run_id
     )${addAttemptUsageSql("closed")}`,
    [id, failure.kind, failure.category, failure.retryable, failure.message],
  );
}

/** Closes a Run's open Attempt as Canceled (operator cancel), its minutes counted; returns its id. */
export async function cancelOpenAttempt(sql: Sql, runId: string): Promise<string | null> {
  const { rows } = await sql.query<{ id: string }>(
    `WITH closed AS (
       UPDATE attempts SET state = 'Canceled', ended_at = now(), duration_ms = (EXTRACT(EPOCH FROM now() - started_at) * 1000)::int
        WHERE run_id = $1 AND state = 'Running'
       RETURNING id, run_id, cost_usd, duration_ms
     ), counted AS (${addAttemptUsageSql("closed")}
     )
     SELECT id FROM closed`,
    [runId],
  );
  return rows[0]?.id ?? null;
}

/**
 * Closes an Attempt whose lease expired or whose worker died (found by the sweep) as an
 * InfraFailure (`lease_lost`, retryable), with `message` saying why; the Run goes on or fails.
 */
export async function expireAttempt(db: Db, attemptId: string, message: string = LEASE_EXPIRED): Promise<{ run: RunRow; decision: RetryDecision } | null> {
  return transaction(db, async (sql) => {
    const { rows } = await sql.query<{ run_id: string; number: number }>(
      `SELECT run_id, number FROM attempts WHERE id = $1 AND state = 'Running'`,
      [attemptId],
    );
    const row = rows[0];
    if (!row) return null;
    await lockRun(sql, row.run_id);
    const lost = infraFailure("lease_lost", message);
    await closeLostAttempt(sql, attemptId, lost);
    const decision = decideAfterFailure(lost, row.number);
    const run =
      decision.tag === "RetryAttempt"
        ? await touchRun(sql, row.run_id)
        : await guardedRunUpdate(sql, row.run_id, TRANSITIONS.fail, `ended_at = now()`, [], "fail");
    countAttemptOutcome("Failed", lost.category, null);
    return { run, decision };
  });
}
