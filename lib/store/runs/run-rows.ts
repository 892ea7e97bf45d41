import { countRunTransition } from "../../metrics/metrics";
import type { RunStateName, Transition } from "../../engine/run-state";
import { ConflictError, NotFoundError } from "../../errors";
import type { ReviewReason } from "../../loops/steering";
import { hasOutboundHooks, recordIfTerminal } from "../outbound/terminal-deliveries";
import { markRunsChanged } from "./run-changed";
import { first, literal, raw, sql, type Statement } from "../kernel/sql";
import type { Sql } from "../kernel/transaction";

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
  /** Why a writer reviews the Run's commits before they are pushed (ADR 0058); null: pushed as made. */
  review_reason: ReviewReason | null;
}

export const RUN_COLUMNS = `id, event_id, loop, repo, item_key, number, state, agent, model, prompt, approval_required,
  reserved_generation, branch, pull_request_number, received_at, waiting_reason, resume_session, review_reason`;

/** RUN_COLUMNS of the table named `alias`, for a statement that names those columns elsewhere too. */
export const runColumnsOf = (alias: string): string =>
  RUN_COLUMNS.split(",")
    .map((column) => `${alias}.${column.trim()}`)
    .join(", ");

export async function lockRun(tx: Sql, runId: string): Promise<RunRow> {
  const row = await first<RunRow>(tx, sql`SELECT ${raw(RUN_COLUMNS)} FROM runs WHERE id = ${runId} FOR UPDATE`);
  if (!row) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  return row;
}

/** Marks a Run changed without a state change (its next Attempt began, a retry was decided). */
export async function touchRun(tx: Sql, runId: string): Promise<RunRow> {
  const row = await first<RunRow>(tx, sql`UPDATE runs SET updated_at = now() WHERE id = ${runId} RETURNING ${raw(RUN_COLUMNS)}`);
  if (!row) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  await markRunsChanged(tx, [runId]);
  return row;
}

/**
 * Writes a Transition of the engine (lib/engine/run-state.ts TRANSITIONS): the state it moves
 * to, and `set` (more columns), guarded by its legal source states. Zero rows means the Run was
 * not in one of them (a lost race, or an illegal action): a typed conflict, never an
 * overwrite. `action` names it in that conflict's message.
 */
export async function guardedRunUpdate(tx: Sql, runId: string, transition: Transition, set: Statement | null, action: string): Promise<RunRow> {
  const { from, to } = transition;
  const row = await first<RunRow & { hooked: boolean }>(
    tx,
    sql`UPDATE runs SET state = ${literal(to)}${set ? sql`, ${set}` : raw("")}, updated_at = now() WHERE id = ${runId} AND state::text = ANY(${from})
     RETURNING ${raw(RUN_COLUMNS)}, ${raw(hasOutboundHooks("runs"))} AS hooked`,
  );
  if (row) {
    countRunTransition(row.state, 1, row.pull_request_number);
    await markRunsChanged(tx, [runId]);
    // outbound webhooks: deliveries written with the terminal state, when anyone subscribed
    if (row.hooked) await recordIfTerminal(tx, row, from);
    const { hooked: _, ...run } = row;
    return run;
  }
  const current = await first<{ state: RunStateName }>(tx, sql`SELECT state FROM runs WHERE id = ${runId}`);
  if (!current) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  throw new ConflictError(
    "run_state_conflict",
    `Cannot ${action} a Run that is ${current.state}; it must be ${from.join(" or ")}.`,
    { state: current.state, allowed: from },
  );
}
