import { auditOfRepos } from "../store/reads/audit-page";
import type { Db } from "../store/kernel/db";
import { toAuditView, type AuditView } from "./run-detail";

/** The audit log of the repositories in scope, newest first, paged by id (`before`). */
export async function loadAudit(
  db: Db,
  repos: string[],
  opts: { before?: string | null; limit?: number } = {},
): Promise<{ entries: AuditView[]; next: string | null }> {
  const limit = Math.min(200, Math.max(1, opts.limit ?? 50));
  if (!repos.length) return { entries: [], next: null };
  const rows = await auditOfRepos(db, repos, opts.before ?? null, limit + 1);
  const entries = rows.slice(0, limit).map(toAuditView);
  return { entries, next: rows.length > limit ? entries.at(-1)!.id : null };
}
