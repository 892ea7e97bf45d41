import type { Db } from "../kernel/db";
import { first, sql } from "../kernel/sql";
import type { Sql } from "../kernel/transaction";

/** Records an operator action in the audit log, inside the action's own transaction; its id. */
export async function audit(
  tx: Sql,
  entry: { actor: string; action: string; repo?: string | null; runId?: string | null; detail?: unknown },
): Promise<string> {
  const detail = entry.detail === undefined ? null : JSON.stringify(entry.detail);
  const row = await first<{ id: string }>(
    tx,
    sql`INSERT INTO audit_log (actor, action, repo, run_id, detail)
        VALUES (${entry.actor}, ${entry.action}, ${entry.repo ?? null}, ${entry.runId ?? null}, ${detail}) RETURNING id::text AS id`,
  );
  return row!.id;
}

export interface AuditedIntervention {
  runId: string;
  attemptId: string;
  text: string;
  actor: string;
}

/**
 * The intervention an operator made, as the audit log holds it: what a worker delivers to an
 * agent, whatever a message on the control channel claims (a forged one names no such row).
 */
export async function readAuditedIntervention(db: Db, auditId: string): Promise<AuditedIntervention | null> {
  if (!/^\d{1,19}$/.test(auditId)) return null;
  const row = await first<{ run_id: string | null; actor: string; detail: { attemptId?: unknown; text?: unknown } | null }>(
    db.pool,
    sql`SELECT run_id, actor, detail FROM audit_log WHERE id = ${auditId} AND action = 'intervene'`,
  );
  if (!row?.run_id || typeof row.detail?.attemptId !== "string" || typeof row.detail.text !== "string") return null;
  return { runId: row.run_id, attemptId: row.detail.attemptId, text: row.detail.text, actor: row.actor };
}

/** Whether the Attempt's row says an operator canceled it (what a cancel message is checked against). */
export async function isAttemptCanceled(db: Db, attemptId: string): Promise<boolean> {
  const row = await first<{ state: string }>(db.pool, sql`SELECT state FROM attempts WHERE id = ${attemptId}`);
  return row?.state === "Canceled";
}

/** The person whose Board move (audited `move_card`) of the Item came last within `window` (an interval) before `at`, or null. */
export async function lastBoardMover(db: Db, repo: string, number: number, at: string, window: string): Promise<string | null> {
  const row = await first<{ actor: string }>(
    db.pool,
    sql`SELECT actor FROM audit_log
      WHERE repo = ${repo} AND action = 'move_card' AND (detail->>'number')::int = ${number} AND at >= ${at}::timestamptz - ${window}::interval
      ORDER BY at DESC, id DESC LIMIT 1`,
  );
  return row?.actor ?? null;
}
