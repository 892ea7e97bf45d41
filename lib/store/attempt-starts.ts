import { AGENT_STEP } from "../engine/ids";
import { TRANSITIONS, type RunStateName } from "../engine/run-state";
import type { Db } from "./db";
import { groupCommit, perObject } from "./group-commit";
import { QUOTA_WAITING_PREFIX } from "./repo-metering";
import { runColumnsOf, type RunRow } from "./run-rows";
import { literal, prepared, raw, sql, type Queryable } from "./sql";
import { transaction } from "./transaction";

/**
 * The statement that starts Attempts, one or many (group-committed: ADR 0030): Attempt `id`
 * (number `number`) of its Run under a fresh lease, from the states `from`, and, given
 * `version`, only while the Run is still the version the start was decided on (a caller
 * holding the Run's lock checked that itself: null).
 */
export interface StartCall {
  id: string;
  runId: string;
  number: number;
  lease: { token: string; workerId: string };
  from: readonly RunStateName[];
  version: string | null;
}

/**
 * A started Run, with the App's pull request branch its Event continues (`submission.branch`,
 * ADR 0019; null when it names none), read by the start so that the Attempt needs no read of
 * its own.
 */
export type StartedRun = RunRow & { submitted_branch: string | null };

const inputOf = (c: StartCall, k: number) => ({
  k,
  attempt_id: c.id,
  run_id: c.runId,
  number: c.number,
  lease_token: c.lease.token,
  worker_id: c.lease.workerId,
  run_from: c.from,
  version: c.version,
});

/**
 * Each call's Attempt opened and its Run moved to Running, in one statement, only where the
 * Run is in a state its start moves from and still its version. Admitted, a Run drops its
 * quota waiting reason. The Runs are found by their ids (`= ANY`, an index scan whatever the
 * plan) and written in id order (the calls come sorted). Returns one row per Run started.
 */
export const startsSql = (calls: readonly StartCall[]) => sql`
WITH calls AS (
  SELECT * FROM json_to_recordset(${JSON.stringify(calls.map(inputOf))}::json)
    AS c(k int, attempt_id text, run_id text, number int, lease_token text, worker_id text, run_from text[], version text)
), started AS (
  UPDATE runs r SET state = ${literal(TRANSITIONS.start.to)}, started_at = COALESCE(r.started_at, now()), updated_at = now(),
         waiting_reason = CASE WHEN starts_with(r.waiting_reason, ${literal(QUOTA_WAITING_PREFIX)}) THEN NULL ELSE r.waiting_reason END
    FROM calls
   WHERE r.id = ANY (ARRAY(SELECT run_id FROM calls)) AND r.id = calls.run_id AND r.state::text = ANY(calls.run_from)
     AND (calls.version IS NULL OR r.xmin::text = calls.version)
  RETURNING calls.attempt_id, calls.number AS attempt_number, calls.lease_token, calls.worker_id, ${raw(runColumnsOf("r"))}
), attempt AS (
  INSERT INTO attempts (id, run_id, step, number, state, lease_token, worker_id, agent)
  SELECT attempt_id, id, ${literal(AGENT_STEP)}, attempt_number, 'Running', lease_token, worker_id, agent FROM started ORDER BY id
)
SELECT started.*, (SELECT submission->>'branch' FROM events WHERE id = started.event_id) AS submitted_branch FROM started`;

type StartedRow = StartedRun & { attempt_id: string; attempt_number: number; lease_token: string; worker_id: string };

/** The starts `calls` (of distinct Runs) written on `on`: the Run each started, or null where its Run was not as decided. */
export async function writeStarts(on: Queryable, calls: readonly StartCall[]): Promise<(StartedRun | null)[]> {
  const sorted = [...calls].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  const started = (await prepared<StartedRow>(on, "atelier-starts", startsSql(sorted))).rows;
  const byRun = new Map(
    started.map(({ attempt_id: _a, attempt_number: _n, lease_token: _l, worker_id: _w, ...run }) => [run.id, run as StartedRun]),
  );
  return calls.map((c) => byRun.get(c.runId) ?? null);
}

/**
 * A Db's starts, group-committed on its batch connections; a call whose batch failed is made
 * alone, in a transaction planned as the batch connections plan.
 */
export const startAttempts = perObject((db: Db) =>
  groupCommit<StartCall, StartedRun | null>({
    key: (call) => call.runId,
    many: (calls) => writeStarts(db.batch, calls),
    alone: (call) => transaction(db, async (tx) => (await writeStarts(tx, [call]))[0]!, { indexPlanned: true }),
  }),
);
