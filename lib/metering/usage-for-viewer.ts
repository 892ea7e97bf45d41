import { z } from "zod";
import { requireViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import { narrow, scopeRepos } from "../dashboard/scope";
import type { Db } from "../store/db";
import { usageReport, type UsageReport } from "./usage-report";

/** GET /api/v1/usage's query. */
export const usageQuery = z.strictObject({
  month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, "month is YYYY-MM").optional(),
  repo: z.string().max(200).optional(),
});

/**
 * The Usage page's and GET /api/v1/usage's read: the report over the repositories the viewer
 * can see (all of them for an admin), with the limits of their installations; only an admin
 * may change a limit.
 */
export async function usageForViewer(
  db: Db,
  viewer: Viewer | null,
  q: { month?: string; repo?: string } = {},
): Promise<UsageReport & { canEditQuotas: boolean; repos: string[] }> {
  const who = requireViewer(viewer);
  const visible = await scopeRepos(db, who);
  const repos = narrow(visible, q.repo);
  const everything = who.admin && !q.repo;
  let installationIds: number[] | null = null;
  if (!everything) {
    const { rows } = await db.pool.query<{ installation_id: number }>(
      `SELECT DISTINCT installation_id FROM repositories WHERE full_name = ANY($1)`,
      [repos],
    );
    installationIds = rows.map((r) => r.installation_id);
  }
  const report = await usageReport(db, { month: q.month, repos: everything ? null : repos, installationIds });
  return { ...report, canEditQuotas: who.admin, repos: visible };
}
