import { countRunTransition } from "../metrics/metrics";
import type { RunStateName, Transition } from "../engine/run-state";
import { ConflictError, NotFoundError } from "../errors";
import { hasOutboundHooks, recordIfTerminal } from "./terminal-deliveries";
import { markRunsChanged } from "./run-changed";
import type { Sql } from "./transaction";

/** The columns the engine's transitions read back. */
export interface RunRow {
  id: string;
  event_id: string;
  loop: string;
  repo: string;
  item_key: string;
  number: number | null;
  state: RunStateName;
  agent: string;
  /** The model the Loop picked; null: the agent's default. */
  model: string | null;
  prompt: string;
  approval_required: boolean;
  reserved_generation: number | null;
  branch: string | null;
  pull_request_number: number | null;
  received_at: Date;
  waiting_reason: string | null;
  /** The agent session the Run's next Attempts resume (set by an operator's retry); null: a fresh one. */
  resume_session: string | null;
}

export const RUN_COLUMNS = `id, event_id, loop, repo, item_key, number, state, agent, model, prompt, approval_required,
  reserved_generation, branch, pull_request_number, received_at, waiting_reason, resume_session`;

export async function lockRun(sql: Sql, runId: string): Promise<RunRow> {
  const { rows } = await sql.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 FOR UPDATE`, [runId]);
  if (!rows[0]) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  return rows[0];
}

/** Marks a Run changed without a state change (its next Attempt began, a retry was decided). */
export async function touchRun(sql: Sql, runId: string): Promise<RunRow> {
  const { rows } = await sql.query<RunRow>(
    `UPDATE runs SET updated_at = now() WHERE id = $1 RETURNING ${RUN_COLUMNS}`,
    [runId],
  );
  if (!rows[0]) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  await markRunsChanged(sql, [runId]);
  return rows[0];
}

/**
 * Writes a Transition of the engine (lib/engine/run-state.ts TRANSITIONS): the state it moves
 * to, and `set` (more columns, from $3 on), guarded by its legal source states. Zero rows means
 * the Run was not in one of them (a lost race, or an illegal action): a typed conflict, never
 * an overwrite. `action` names it in that conflict's message.
 */
export async function guardedRunUpdate(
  sql: Sql,
  runId: string,
  transition: Transition,
  set: string,
  params: unknown[],
  action: string,
): Promise<RunRow> {
  const { from, to } = transition;
  const { rows } = await sql.query<RunRow & { hooked: boolean }>(
    `UPDATE runs SET state = '${to}'${set ? `, ${set}` : ""}, updated_at = now() WHERE id = $1 AND state::text = ANY($2)
     RETURNING ${RUN_COLUMNS}, ${hasOutboundHooks("runs")} AS hooked`,
    [runId, from, ...params],
  );
  const row = rows[0];
  if (row) {
    countRunTransition(row.state);
    await markRunsChanged(sql, [runId]);
    // outbound webhooks: deliveries written with the terminal state, when anyone subscribed
    if (row.hooked) await recordIfTerminal(sql, row, from);
    const { hooked: _, ...run } = row;
    return run;
  }
  const current = await sql.query<{ state: RunStateName }>(`SELECT state FROM runs WHERE id = $1`, [runId]);
  if (!current.rows[0]) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  throw new ConflictError(
    "run_state_conflict",
    `Cannot ${action} a Run that is ${current.rows[0].state}; it must be ${from.join(" or ")}.`,
    { state: current.rows[0].state, allowed: from },
  );
}
