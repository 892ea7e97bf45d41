import { approvalEventKey } from "../../engine/ids";
import { TRANSITIONS } from "../../engine/run-state";
import { ConflictError } from "../../errors";
import type { Db } from "../kernel/db";
import { isParkedByEngineFailures } from "./engine-failures";
import { audit } from "../people/audit-log";
import { guardedRunUpdate, lockRun, type RunRow } from "./run-rows";
import { first, query, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

/** Pending → Waiting: the Loop asks for an operator's approval. */
export async function parkForApproval(db: Db, runId: string): Promise<RunRow> {
  return transaction(db, (tx) => guardedRunUpdate(tx, runId, TRANSITIONS.parkForApproval, sql`waiting_reason = 'approval'`, "park"));
}

/**
 * Waiting → Queued, recording the approval Event and who approved. A Run parked by engine
 * failures does not wait for an approval but for an operator's Retry, which starts its count
 * again: an Approve there is refused (it would start the Run with its count at the limit, parked
 * again by the next failure, and with no one having said "try again").
 */
export async function approve(db: Db, runId: string, actor: string): Promise<RunRow> {
  return transaction(db, async (tx) => {
    const run = await lockRun(tx, runId);
    if (isParkedByEngineFailures(run.state, run.waiting_reason)) {
      throw new ConflictError("run_parked_by_engine_failures", "This Run waits for a Retry, not an approval: Atelier failed moving it several times. Retry it (its count starts again) or cancel it.");
    }
    const updated = await guardedRunUpdate(tx, runId, TRANSITIONS.approve, sql`waiting_reason = NULL`, "approve");
    const eventId = approvalEventKey(runId);
    await query(
      tx,
      sql`INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission)
          VALUES (${eventId}, 'approval', ${run.loop}, ${run.repo}, ${run.item_key}, ${run.number}, 'Claimed', ${runId}, ${JSON.stringify({ approvedBy: actor })})
          ON CONFLICT (id) DO NOTHING`,
    );
    await query(tx, sql`INSERT INTO approvals (run_id, event_id, approved_by) VALUES (${runId}, ${eventId}, ${actor}) ON CONFLICT DO NOTHING`);
    await audit(tx, { actor, action: "approve", repo: run.repo, runId });
    return updated;
  });
}

/** A Run's Loop and repository, and the role its Event said the Loop needs (when its actor fell short). */
export async function approvalFacts(db: Db, runId: string): Promise<{ loop: string; repo: string; needs: string | null } | null> {
  const row = await first<{ loop: string; repo: string; needs: string | null }>(
    db.pool,
    sql`SELECT r.loop, r.repo, e.submission->'approvalReason'->>'needs' AS needs FROM runs r JOIN events e ON e.id = r.event_id WHERE r.id = ${runId}`,
  );
  return row ?? null;
}
