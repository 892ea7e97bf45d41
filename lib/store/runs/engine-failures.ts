import { allows, TRANSITIONS, type RunStateName } from "../../engine/run-state";
import type { Db } from "../kernel/db";
import { markRunsChanged } from "./run-changed";
import { guardedRunUpdate } from "./run-rows";
import { first, raw, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

/**
 * Dead-letter for engine failures: a Run whose job keeps failing inside Atelier (a bug, a row
 * the engine cannot handle — not an agent's failure, not an outage) is counted, and parked
 * after a few with its error kept, in Needs you, instead of being retried by every reconcile
 * forever. Before any Attempt it is parked as Waiting (reason `engine_failed`); between
 * Attempts (no Attempt open) it fails. The count is of failures in a row: an Attempt whose
 * outcome is written (the engine moved the Run) forgets it, and so does an operator's retry.
 */

/** How many engine failures of one Run's job before it is parked. */
export const ENGINE_FAILURES_BEFORE_PARKING = 3;
/** The Waiting reason of a Run parked by engine failures. */
export const ENGINE_FAILED_REASON = "engine_failed";
/** The longest engine error kept. */
const ERROR_MAX = 2_000;

/** What an Attempt's outcome and an operator's retry add to their update of the Run: the count starts again. */
export const FORGET_ENGINE_FAILURES = raw(", engine_failures = 0, engine_error = NULL");

/** The Run waits for an operator because its job kept failing inside Atelier. */
export const isParkedByEngineFailures = (state: RunStateName, waitingReason: string | null): boolean =>
  state === "Waiting" && waitingReason === ENGINE_FAILED_REASON;

export type EngineFailureResult = { parked: false; failures: number } | { parked: true; failures: number; state: "Waiting" | "Failed" };

/**
 * Counts one failure of the Run's job and keeps its error; at the limit, parks it (under the
 * Run's lock, guarded by the source states, never while an Attempt is open). Null: no such Run.
 */
export async function recordEngineFailure(db: Db, runId: string, error: string, limit = ENGINE_FAILURES_BEFORE_PARKING): Promise<EngineFailureResult | null> {
  return transaction(db, async (tx) => {
    const row = await first<{ failures: number; state: RunStateName; open_attempt: boolean }>(
      tx,
      sql`UPDATE runs SET engine_failures = engine_failures + 1, engine_error = ${error.slice(0, ERROR_MAX)}, updated_at = now() WHERE id = ${runId}
       RETURNING engine_failures AS failures, state::text AS state,
                 EXISTS (SELECT 1 FROM attempts a WHERE a.run_id = runs.id AND a.state = 'Running') AS open_attempt`,
    );
    if (!row) return null;
    await markRunsChanged(tx, [runId]);
    if (row.failures < limit || row.open_attempt) return { parked: false, failures: row.failures };
    if (allows("parkEngineFailure", row.state)) {
      await guardedRunUpdate(tx, runId, TRANSITIONS.parkEngineFailure, sql`waiting_reason = ${ENGINE_FAILED_REASON}`, "park");
      return { parked: true, failures: row.failures, state: "Waiting" };
    }
    if (allows("failEngineFailure", row.state)) {
      await guardedRunUpdate(tx, runId, TRANSITIONS.failEngineFailure, sql`ended_at = now()`, "fail");
      return { parked: true, failures: row.failures, state: "Failed" };
    }
    return { parked: false, failures: row.failures };
  });
}
