import type { Db } from "../kernel/db";
import { first, query, rows, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";
import { audit } from "../people/audit-log";

/**
 * Dashboard issues (`dashboard_issues`, ADR 0088): per repository (by its GitHub id) the issue
 * the App keeps and the body it last wrote; and the ticks that acted (`dashboard_issue_ticks`).
 */

/** A repository whose `.github/atelier.yml` says `dashboard_issue: true`. */
export interface DashboardRepository {
  id: number;
  full_name: string;
  installation_id: number;
}

export function dashboardRepositories(db: Db): Promise<DashboardRepository[]> {
  return rows<DashboardRepository>(
    db.pool,
    sql`SELECT id, full_name, installation_id FROM repositories
         WHERE removed_at IS NULL AND (config->>'dashboardIssue')::boolean IS TRUE ORDER BY id`,
  );
}

/** The repository of GitHub id `repositoryId` if it keeps a dashboard issue (by its id: a name may be another repository's by now). */
export async function dashboardRepository(db: Db, repositoryId: number): Promise<DashboardRepository | undefined> {
  return first<DashboardRepository>(
    db.pool,
    sql`SELECT id, full_name, installation_id FROM repositories
         WHERE id = ${repositoryId} AND removed_at IS NULL AND (config->>'dashboardIssue')::boolean IS TRUE`,
  );
}

export interface DashboardIssueRow {
  number: number;
  body: string;
  /** the App closed it when the repository turned it off */
  closed: boolean;
}

/** The repository's dashboard issue; number 0 while its creation is under way. */
export function findDashboardIssue(db: Db, repositoryId: number): Promise<DashboardIssueRow | undefined> {
  return first<DashboardIssueRow>(db.pool, sql`SELECT number, body, closed_at IS NOT NULL AS closed FROM dashboard_issues WHERE repository_id = ${repositoryId}`);
}

/**
 * The open dashboard issues of repositories whose `.github/atelier.yml`, read without an error
 * at its top or on `dashboard_issue`, no longer says `dashboard_issue: true` (a file that cannot
 * be read says nothing either way: its issue stays). Repositories still installed only.
 */
export function dashboardIssuesTurnedOff(db: Db): Promise<(DashboardRepository & { number: number })[]> {
  return rows<DashboardRepository & { number: number }>(
    db.pool,
    sql`SELECT p.id, p.full_name, p.installation_id, d.number FROM dashboard_issues d JOIN repositories p ON p.id = d.repository_id
         WHERE d.closed_at IS NULL AND d.number > 0 AND p.removed_at IS NULL AND p.config IS NOT NULL
           AND (p.config->>'dashboardIssue')::boolean IS NOT TRUE
           AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(p.config->'errors', '[]')) e
                            WHERE e->>'loop' IS NULL AND COALESCE(e->>'path', '') IN ('', 'dashboard_issue'))
         ORDER BY p.id`,
  );
}

/** Records that the App closed the repository's issue, with the body it wrote last. */
export async function closeDashboardIssueRow(db: Db, repositoryId: number, body: string): Promise<void> {
  await query(db.pool, sql`UPDATE dashboard_issues SET closed_at = now(), body = ${body}, updated_at = now() WHERE repository_id = ${repositoryId}`);
}

/** Claims the creation of the repository's issue: false when someone else has it (or made it). */
export async function claimDashboardIssue(db: Db, repositoryId: number): Promise<boolean> {
  const { rowCount } = await query(db.pool, sql`INSERT INTO dashboard_issues (repository_id, number, body) VALUES (${repositoryId}, 0, '') ON CONFLICT DO NOTHING`);
  return rowCount === 1;
}

/** Gives back a creation claim that did not make the issue. */
export async function releaseDashboardIssue(db: Db, repositoryId: number): Promise<void> {
  await query(db.pool, sql`DELETE FROM dashboard_issues WHERE repository_id = ${repositoryId} AND number = 0`);
}

/** The issue as the App wrote it, open. */
export async function saveDashboardIssue(db: Db, repositoryId: number, number: number, body: string): Promise<void> {
  await query(db.pool, sql`UPDATE dashboard_issues SET number = ${number}, body = ${body}, closed_at = NULL, updated_at = now() WHERE repository_id = ${repositoryId}`);
}

/** Whether issue `number` of the repository of GitHub id `repositoryId` is its dashboard issue (the triggers leave it alone). */
export async function isDashboardIssue(db: Db, repositoryId: number, number: number): Promise<boolean> {
  const row = await first<{ one: number }>(db.pool, sql`SELECT 1 AS one FROM dashboard_issues WHERE repository_id = ${repositoryId} AND number = ${number}`);
  return row !== undefined;
}

/** Claims a tick's key: false when it acted already. */
export async function claimDashboardTick(db: Db, tick: { key: string; repositoryId: number; subject: string; actor: string; deliveryId: string | null }): Promise<boolean> {
  const { rowCount } = await query(
    db.pool,
    sql`INSERT INTO dashboard_issue_ticks (key, repository_id, subject, actor, delivery_id)
        VALUES (${tick.key}, ${tick.repositoryId}, ${tick.subject}, ${tick.actor}, ${tick.deliveryId}) ON CONFLICT (key) DO NOTHING`,
  );
  return rowCount === 1;
}

/** Gives a tick's key back (its action was refused, so a later tick may act). */
export async function releaseDashboardTick(db: Db, key: string): Promise<void> {
  await query(db.pool, sql`DELETE FROM dashboard_issue_ticks WHERE key = ${key}`);
}

/** Records what a tick did (or why it did nothing) in the audit log. */
export async function auditDashboardTick(db: Db, entry: { actor: string; action: "dashboard_issue_tick" | "dashboard_issue_tick_refused"; repo: string; detail: unknown }): Promise<void> {
  await transaction(db, (tx) => audit(tx, entry));
}
