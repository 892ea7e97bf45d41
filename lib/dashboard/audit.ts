import type { Db } from "../store/db";
import { toAuditView, type AuditView } from "./run-detail";

/** The audit log of the repositories in scope, newest first, paged by id (`before`). */
export async function loadAudit(
  db: Db,
  repos: string[],
  opts: { before?: string | null; limit?: number } = {},
): Promise<{ entries: AuditView[]; next: string | null }> {
  const limit = Math.min(200, Math.max(1, opts.limit ?? 50));
  if (!repos.length) return { entries: [], next: null };
  const { rows } = await db.pool.query(
    `SELECT id::text AS id, at, actor, action, repo, run_id, detail FROM audit_log
      WHERE repo = ANY($1) AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY audit_log.id DESC LIMIT $3`,
    [repos, opts.before ?? null, limit + 1],
  );
  const entries = rows.slice(0, limit).map(toAuditView);
  return { entries, next: rows.length > limit ? entries.at(-1)!.id : null };
}
