import type { Sql } from "./transaction";

/** Records an operator action in the audit log, inside the action's own transaction. */
export async function audit(
  sql: Sql,
  entry: { actor: string; action: string; repo?: string | null; runId?: string | null; detail?: unknown },
): Promise<void> {
  await sql.query(`INSERT INTO audit_log (actor, action, repo, run_id, detail) VALUES ($1, $2, $3, $4, $5)`, [
    entry.actor,
    entry.action,
    entry.repo ?? null,
    entry.runId ?? null,
    entry.detail === undefined ? null : JSON.stringify(entry.detail),
  ]);
}
