import { approvalEventKey } from "../engine/ids";
import { TRANSITIONS } from "../engine/run-state";
import type { Db } from "./db";
import { audit } from "./audit";
import { guardedRunUpdate, lockRun, type RunRow } from "./run-rows";
import { transaction } from "./transaction";

/** Pending → Waiting: the Loop asks for an operator's approval. */
export async function parkForApproval(db: Db, runId: string): Promise<RunRow> {
  return transaction(db, (sql) =>
    guardedRunUpdate(sql, runId, TRANSITIONS.parkForApproval, `waiting_reason = 'approval'`, [], "park"),
  );
}

/** Waiting → Queued, recording the approval Event and who approved. */
export async function approve(db: Db, runId: string, actor: string): Promise<RunRow> {
  return transaction(db, async (sql) => {
    const run = await lockRun(sql, runId);
    const updated = await guardedRunUpdate(sql, runId, TRANSITIONS.approve, `waiting_reason = NULL`, [], "approve");
    const eventId = approvalEventKey(runId);
    await sql.query(
      `INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission)
       VALUES ($1, 'approval', $2, $3, $4, $5, 'Claimed', $6, $7) ON CONFLICT (id) DO NOTHING`,
      [eventId, run.loop, run.repo, run.item_key, run.number, runId, JSON.stringify({ approvedBy: actor })],
    );
    await sql.query(`INSERT INTO approvals (run_id, event_id, approved_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
      runId,
      eventId,
      actor,
    ]);
    await audit(sql, { actor, action: "approve", repo: run.repo, runId });
    return updated;
  });
}
