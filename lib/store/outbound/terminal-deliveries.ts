import { firstPrepared, raw, rows, sql, type Statement } from "../kernel/sql";
import type { Sql } from "../kernel/transaction";
import { isTerminalState, runEventPayload, type TerminalRunRow } from "../runs/run-event-payload";

const ISO = (col: string) => `to_char(${col}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * SQL: webhook `h` hears of the terminal states of the Run `run` (an alias with its
 * repository_id and loop) of installation `installationId`: the instance's webhooks, its
 * installation's, its Loop's. A Loop's hook names its repository by GitHub id: a repository that
 * took the name of the hook's one later hears nothing of it (ADR 0070). A Slack target hears only
 * of the notices it is subscribed to (ADR 0087).
 */
const LISTENS = (run: string, installationId: string) =>
  `h.kind = 'webhook' AND ((h.repo IS NULL AND (h.installation_id IS NULL OR h.installation_id = ${installationId})) OR (h.repository_id = ${run}.repository_id AND h.loop = ${run}.loop))`;

/** The outbound hooks subscribed to a Run (`run` has the Run's repo, loop and installation_id). */
const HOOKS_OF_RUN = `SELECT h.id FROM outbound_hooks h, run WHERE ${LISTENS("run", "run.installation_id")}`;

/**
 * SQL: whether anyone subscribed to the terminal states of the Run whose row is `run` (an alias
 * in scope, with its repo and loop) — for a hot path that wants to skip
 * recordTerminalDeliveries' round trip when nobody listens.
 */
export const hasOutboundHooks = (run: string): string =>
  // most instances have no hook at all: that is one look at an empty table
  `(EXISTS (SELECT 1 FROM outbound_hooks)
    AND EXISTS (SELECT 1 FROM outbound_hooks h
                 WHERE ${LISTENS(run, `(SELECT installation_id FROM repositories WHERE id = ${run}.repository_id)`)}))`;

const terminalRunSql = (runId: string): Statement => sql`
WITH run AS (
  SELECT r.*, rp.installation_id FROM runs r LEFT JOIN repositories rp ON rp.id = r.repository_id WHERE r.id = ${runId}
), hooks AS (
  ${raw(HOOKS_OF_RUN)}
)
SELECT (SELECT array_agg(id ORDER BY id) FROM hooks) AS hook_ids,
       run.id, run.loop, run.repo, run.number, run.state, run.cancel_reason, run.installation_id,
       run.pull_request_number, run.branch, run.head_sha,
       ${raw(ISO("run.received_at"))} AS received_at, ${raw(ISO("run.started_at"))} AS started_at, ${raw(ISO("run.ended_at"))} AS ended_at,
       ${raw(ISO("now() AT TIME ZONE 'UTC'"))} AS now,
       -- a Run failed by engine failures (between Attempts: lib/store/runs/engine-failures.ts) failed
       -- for Atelier's error, not its last Attempt's (an outcome written forgets that error)
       CASE WHEN run.state = 'Failed' AND run.engine_error IS NOT NULL
            THEN json_build_object('kind', 'DefectFailure', 'category', 'internal', 'retryable', false, 'message', run.engine_error)
            ELSE (SELECT json_build_object('kind', a.failure_kind, 'category', a.failure_category, 'retryable', a.retryable,
                                           'message', a.failure_message)
                    FROM attempts a WHERE a.run_id = run.id ORDER BY a.number DESC LIMIT 1) END AS failure,
       (SELECT a.verify FROM attempts a WHERE a.run_id = run.id ORDER BY a.number DESC LIMIT 1) AS verify,
       (SELECT json_build_object('attempts', count(*)::int, 'duration_ms',
                                 COALESCE(sum(COALESCE(a.duration_ms, EXTRACT(EPOCH FROM now() - a.started_at) * 1000)), 0)::bigint,
                                 'tokens_in', sum(a.tokens_in)::bigint, 'tokens_out', sum(a.tokens_out)::bigint,
                                 'cost_usd', sum(a.cost_usd)::float8, 'cost_estimated', COALESCE(bool_or(a.cost_estimated), false))
          FROM attempts a WHERE a.run_id = run.id) AS usage
  FROM run WHERE EXISTS (SELECT 1 FROM hooks)`;

/**
 * Writes one pending delivery per matching hook (the Run's installation's, and its Loop's)
 * for a Run that just reached Succeeded, Failed or Canceled — in the caller's transaction, so
 * the delivery exists exactly when the state does. One query when nobody subscribed.
 * Returns the new delivery ids. The state change's own `atelier_run_changed` notification is
 * what tells the outbound worker to send them; its sweep finds any it missed.
 */
export async function recordTerminalDeliveries(tx: Sql, runId: string): Promise<number[]> {
  const row = await firstPrepared<TerminalRunRow & { hook_ids: number[] | null }>(tx, "atelier-outbound-terminal-run", terminalRunSql(runId));
  if (!row?.hook_ids?.length) return [];
  const payload = JSON.stringify(runEventPayload(row));
  const inserted = await rows<{ id: number }>(
    tx,
    sql`INSERT INTO outbound_deliveries (hook_id, run_id, payload) SELECT h, ${runId}, ${payload} FROM unnest(${row.hook_ids}::bigint[]) AS h RETURNING id`,
  );
  return inserted.map((r) => r.id);
}

/**
 * For the store's guarded Run writes: records the deliveries when the write moved the Run
 * into a terminal state (a write that keeps it where it was, like resolving a failure, does not).
 */
export async function recordIfTerminal(tx: Sql, run: { id: string; state: string }, from: readonly string[]): Promise<void> {
  if (isTerminalState(run.state) && !from.includes(run.state)) await recordTerminalDeliveries(tx, run.id);
}
