import type { Failure } from "../engine/failure";
import type { RunStateName } from "../engine/run-state";
import type { Db } from "./db";
import { FORGET_ENGINE_FAILURES } from "./engine-failures";
import { groupCommit, perObject } from "./group-commit";
import { runColumnsOf, type RunRow } from "./run-rows";
import { prepared, raw, sql, type Queryable } from "./sql";
import { hasOutboundHooks } from "./terminal-deliveries";
import { transaction } from "./transaction";
import type { TranscriptLine } from "./transcript-lines";
import { addUsageSql } from "./usage-counters";

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

/**
 * The statement that records Attempts' outcomes, one or many (group-committed: ADR 0030). Each
 * call is the outcome of one Attempt of its own Run, with the move its result makes (the states
 * the Run must be in, the state it goes to, what else it sets), decided in TypeScript by
 * attempts.ts; the statement carries out each move under that call's own guards.
 */
export interface OutcomeCall {
  attemptId: string;
  runId: string;
  leaseToken: string;
  result: "Succeeded" | "Failed";
  /** the Run's move: the states it must be in, the state it goes to */
  from: readonly RunStateName[];
  to: RunStateName;
  /** the move ends the Run (ended_at) */
  ends: boolean;
  failure: Failure | null;
  summary: string | null;
  /** a succeeded Attempt's branch and pull request (null: the Run keeps its own) */
  branch: string | null;
  pullRequestNumber: number | null;
  headSha: string | null;
  /** every field given: null where the agent reported nothing */
  usage: Required<Usage>;
  /** the transcript lines not stored yet */
  tail: readonly TranscriptLine[];
}

/** What the statement answers for one call: the Run it moved (no id: it moved nothing), what it found locked. */
export type OutcomeRow = Partial<RunRow> & { current_state: RunStateName; hooked: boolean; queued_behind: boolean };

/** A call as one row of the statement's input (json_to_recordset): `k` its place in the batch. */
const inputOf = (c: OutcomeCall, k: number) => ({
  k,
  attempt_id: c.attemptId,
  run_id: c.runId,
  lease_token: c.leaseToken,
  result: c.result,
  run_from: c.from,
  run_to: c.to,
  ends: c.ends,
  failure_kind: c.failure?.kind ?? null,
  failure_category: c.failure?.category ?? null,
  retryable: c.failure?.retryable ?? null,
  failure_message: c.failure?.message ?? null,
  summary: c.summary,
  branch: c.branch,
  pull_request_number: c.pullRequestNumber,
  head_sha: c.headSha,
  duration_ms: c.usage.durationMs,
  tokens_in: c.usage.tokensIn,
  tokens_out: c.usage.tokensOut,
  cost_usd: c.usage.costUsd,
  cost_estimated: c.usage.costEstimated,
  cost_exact: c.usage.costExact,
  model: c.usage.model,
  turns: c.usage.turns,
  session_id: c.usage.sessionId,
  lines: c.tail,
});

const INPUT_COLUMNS = `k int, attempt_id text, run_id text, lease_token text, result text, run_from text[], run_to text, ends boolean,
  failure_kind text, failure_category text, retryable boolean, failure_message text, summary text,
  branch text, pull_request_number int, head_sha text, duration_ms int, tokens_in int, tokens_out int, cost_usd numeric,
  cost_estimated boolean, cost_exact boolean, model text, turns int, session_id text, lines json`;

/**
 * The outcomes in one statement: the Runs locked first, in id order (as every writer of a Run
 * and its Attempts locks its Run first; two batches lock theirs in one order), each Attempt
 * closed only while it is still open under its call's lease token and its Run is in a state
 * the call's move starts from, their usage onto their repositories' month counters (summed per
 * repository: a counter row is written once per statement), each Run moved, and the last
 * transcript lines stored (for a refused outcome too). Each table is reached by the calls' ids
 * (`= ANY`: an index scan whatever the plan). Where outbound hooks listen to a Run and
 * the statement is not `withHooks`, nothing of that call is written: the caller records it
 * again in a transaction that also writes the deliveries. One prepared statement per value of
 * `withHooks`; its input is one json parameter, so its text never varies.
 */
export const outcomesSql = (calls: readonly OutcomeCall[], withHooks: boolean) => sql`
WITH calls AS (
  SELECT * FROM json_to_recordset(${JSON.stringify(calls.map(inputOf))}::json) AS c(${raw(INPUT_COLUMNS)})
), locked AS (
  SELECT id, repo, state, queued_behind, ${raw(hasOutboundHooks("runs"))} AS hooked
    FROM runs WHERE id = ANY (ARRAY(SELECT run_id FROM calls)) ORDER BY id FOR UPDATE
), go AS (
  SELECT calls.*, locked.repo AS run_repo, locked.state AS run_state FROM calls JOIN locked ON locked.id = calls.run_id
   WHERE ${raw(String(withHooks))} OR NOT locked.hooked
), attempt AS (
  UPDATE attempts a SET state = go.result::"AttemptState", ended_at = now(), failure_kind = go.failure_kind,
         failure_category = go.failure_category, retryable = go.retryable, failure_message = go.failure_message, summary = go.summary,
         duration_ms = go.duration_ms, tokens_in = go.tokens_in, tokens_out = go.tokens_out, cost_usd = go.cost_usd,
         cost_estimated = go.cost_estimated, cost_exact = go.cost_exact, model = go.model, turns = go.turns, session_id = go.session_id
    FROM go
   WHERE a.id = ANY (ARRAY(SELECT attempt_id FROM calls)) AND a.id = go.attempt_id AND a.state = 'Running' AND a.lease_token = go.lease_token AND go.run_state::text = ANY(go.run_from)
  RETURNING a.id, a.cost_usd, a.duration_ms
), counted AS (${addUsageSql(
  raw(`(SELECT lower(go.run_repo) AS repo, sum(attempt.cost_usd) AS cost_usd, sum(attempt.duration_ms) AS duration_ms
          FROM attempt JOIN go ON go.attempt_id = attempt.id GROUP BY lower(go.run_repo))`),
)}
), moved AS (
  UPDATE runs r SET state = go.run_to::"RunState", ended_at = CASE WHEN go.ends THEN now() ELSE r.ended_at END,
         branch = COALESCE(go.branch, r.branch), pull_request_number = COALESCE(go.pull_request_number, r.pull_request_number),
         head_sha = COALESCE(go.head_sha, r.head_sha), updated_at = now(),
         failed_attempt_id = CASE WHEN go.result = 'Failed' THEN go.attempt_id ELSE r.failed_attempt_id END${FORGET_ENGINE_FAILURES}
    FROM go JOIN attempt ON attempt.id = go.attempt_id
   WHERE r.id = ANY (ARRAY(SELECT run_id FROM calls)) AND r.id = go.run_id
  RETURNING ${raw(runColumnsOf("r"))}
), lines AS (
  INSERT INTO transcript_entries (attempt_id, run_id, stream, text, at)
  SELECT go.attempt_id, go.run_id, l.stream, l.text, l.at
    FROM go, ROWS FROM (json_to_recordset(go.lines) AS (stream text, text text, at timestamptz)) WITH ORDINALITY AS l(stream, text, at, n)
   ORDER BY go.k, l.n
)
SELECT calls.k, moved.*, locked.state AS current_state, locked.hooked, locked.queued_behind
  FROM calls LEFT JOIN locked ON locked.id = calls.run_id LEFT JOIN moved ON moved.id = calls.run_id`;

/** The outcomes `calls` (of distinct Runs) recorded on `on`, an answer per call in their order; null: no such Run. */
export async function writeOutcomes(on: Queryable, calls: readonly OutcomeCall[], withHooks: boolean): Promise<(OutcomeRow | null)[]> {
  const name = `atelier-outcomes${withHooks ? "-hooked" : ""}`;
  const answered = (await prepared<OutcomeRow & { k: number }>(on, name, outcomesSql(calls, withHooks))).rows;
  const byCall = new Map(answered.map(({ k, ...row }) => [k, row.current_state ? row : null]));
  return calls.map((_, k) => byCall.get(k) ?? null);
}

/**
 * A Db's outcomes, group-committed (group-commit.ts) on its batch connections; a call whose
 * batch failed is recorded alone, in a transaction planned as the batch connections plan.
 * Outcomes with outbound hooks listening are not written here (the caller's transaction does).
 */
export const recordOutcome = perObject((db: Db) =>
  groupCommit<OutcomeCall, OutcomeRow | null>({
    key: (call) => call.runId,
    many: (calls) => writeOutcomes(db.batch, calls, false),
    alone: (call) => transaction(db, async (tx) => (await writeOutcomes(tx, [call], false))[0]!, { indexPlanned: true }),
  }),
);
