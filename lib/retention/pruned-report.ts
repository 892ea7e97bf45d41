import type { Viewer } from "../auth/viewer";
import { instanceConfig } from "../auth/instance-config";
import type { RetentionDays } from "../config/roster";
import type { Db } from "../store/kernel/db";
import { readPrunedSummary, type PrunedSummary } from "../store/retention/prune-batches";

/** What the Usage page says of retention: the days kept, and what the sweeps pruned. */
export interface PrunedReport {
  days: RetentionDays;
  pruned: PrunedSummary[];
}

/**
 * Retention's report, for an instance admin only: the sweeps count rows of every installation,
 * which no one else may learn the size of (THREATS.md: tenants never touch).
 */
export async function prunedReportFor(db: Db, viewer: Viewer): Promise<PrunedReport | null> {
  if (!viewer.admin) return null;
  const [config, pruned] = await Promise.all([instanceConfig(), readPrunedSummary(db)]);
  return { days: config.retention, pruned };
}
