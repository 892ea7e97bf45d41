import { z } from "zod";
import { requireViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import type { Db } from "../store/kernel/db";
import { installationsOfRepositories } from "../store/github/registrations";
import { installationRepositories } from "../store/github/repository-rows";
import { usageReport, type UsageReport } from "./usage-report";

/** The repositories a viewer sees, and one of them when asked (lib/auth/viewer-scope.ts, passed in: metering sits below the dashboard). */
export interface ViewerScope {
  scopeRepos(db: Db, viewer: Viewer): Promise<string[]>;
  narrow(scope: string[], repo: string | null | undefined): string[];
}

/** GET /api/v1/usage's query. */
export const usageQuery = z.strictObject({
  month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, "month is YYYY-MM").optional(),
  repo: z.string().max(200).optional(),
});

/**
 * The Usage page's and GET /api/v1/usage's read: the report over the repositories the viewer
 * can see (all of them for an admin), with the limits of their installations — an installation's
 * (and its installation-wide spend) only to those who see every repository of it; only an admin
 * may change a limit.
 */
export async function usageForViewer(
  db: Db,
  viewer: Viewer | null,
  scope: ViewerScope,
  q: { month?: string; repo?: string } = {},
): Promise<UsageReport & { canEditQuotas: boolean; repos: string[] }> {
  const who = requireViewer(viewer);
  const visible = await scope.scopeRepos(db, who);
  const repos = scope.narrow(visible, q.repo);
  const everything = who.admin && !q.repo;
  let installationIds: number[] | null = null;
  if (!everything) {
    // an installation's limits carry its whole spend: shown to those who see every repository of it
    const seen = new Set(visible);
    const ids = [...new Set((await installationsOfRepositories(db, repos)).map((r) => r.installation_id))];
    const whole = await Promise.all(ids.map(async (id) => (await installationRepositories(db, id)).every((r) => seen.has(r))));
    installationIds = ids.filter((_, i) => whole[i]);
  }
  const report = await usageReport(db, { month: q.month, repos: everything ? null : repos, installationIds });
  return { ...report, canEditQuotas: who.admin, repos: visible };
}
