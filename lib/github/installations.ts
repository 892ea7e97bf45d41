import type { Db } from "../store/db";
import { transaction, type Sql } from "../store/transaction";
import type { GitHubApp, Octokit } from "./app";
import { describeError } from "./errors";
import { followPages, nextPageUrl } from "./conditional-request";
import type { Log } from "./log";

/**
 * The installations and repositories Atelier knows, kept from webhooks (installation,
 * installation_repositories) and from reconcileInstallations at start: webhooks are hints,
 * GitHub's answer to GET /app/installations is the truth.
 */

export interface InstallationInput {
  id: number;
  account: { login: string; type?: string };
  suspended_at?: string | null;
}

export interface RepositoryInput {
  id: number;
  full_name: string;
  private?: boolean;
  default_branch?: string;
}

export interface InstallationChange {
  installationId: number;
  /** Repositories registered (or registered again) by this change, lower-cased owner/name. */
  registered: string[];
  /** Repositories no longer covered. */
  removed: string[];
}

/** Applies an `installation` or `installation_repositories` webhook; other events change nothing. */
export async function applyInstallationWebhook(db: Db, event: string, payload: Record<string, unknown>): Promise<InstallationChange | null> {
  const installation = payload.installation as InstallationInput | undefined;
  if (!installation || typeof installation.id !== "number") return null;
  const action = String(payload.action ?? "");
  if (event === "installation") {
    switch (action) {
      case "created":
      case "new_permissions_accepted":
        return transaction(db, async (sql) => {
          await upsertInstallation(sql, installation);
          const repos = (payload.repositories as RepositoryInput[] | undefined) ?? [];
          return { installationId: installation.id, registered: await registerRepositories(sql, installation.id, repos), removed: [] };
        });
      case "deleted":
        return transaction(db, async (sql) => {
          await sql.query(`UPDATE installations SET deleted_at = now(), updated_at = now() WHERE id = $1`, [installation.id]);
          const removed = await removeRepositoriesExcept(sql, installation.id, []);
          return { installationId: installation.id, registered: [], removed };
        });
      case "suspend":
      case "unsuspend":
        await transaction(db, (sql) => upsertInstallation(sql, { ...installation, suspended_at: action === "suspend" ? (installation.suspended_at ?? new Date().toISOString()) : null }));
        return { installationId: installation.id, registered: [], removed: [] };
      default:
        return null;
    }
  }
  if (event === "installation_repositories") {
    return transaction(db, async (sql) => {
      await upsertInstallation(sql, installation);
      const added = (payload.repositories_added as RepositoryInput[] | undefined) ?? [];
      const gone = ((payload.repositories_removed as RepositoryInput[] | undefined) ?? []).map((r) => r.id);
      const registered = await registerRepositories(sql, installation.id, added);
      const removed = await removeRepositories(sql, installation.id, gone);
      return { installationId: installation.id, registered, removed };
    });
  }
  return null;
}

export interface ReconcileResult {
  installations: number;
  registered: string[];
  removed: string[];
  /** installations whose repositories could not be listed this time (left as they were) */
  failed: number[];
}

/**
 * Brings the installations and repositories tables in line with GitHub: every installation of
 * the App (GET /app/installations) and the repositories each one covers
 * (GET /installation/repositories); installations GitHub no longer lists are marked deleted.
 */
export async function reconcileInstallations(deps: { db: Db; github: GitHubApp; log?: Log }): Promise<ReconcileResult> {
  const app = await deps.github.appOctokit();
  const first = await app.request("GET /app/installations", { per_page: 100 });
  const { items: installations } = await followPages(app, { data: first.data as InstallationInput[], link: (first.headers.link as string | undefined) ?? null }, 100);
  const registered: string[] = [];
  const removed: string[] = [];
  const failed: number[] = [];
  for (const installation of installations) {
    let repos: RepositoryInput[] = [];
    const suspended = Boolean(installation.suspended_at);
    if (!suspended) {
      try {
        repos = await listInstallationRepositories(deps.github.installationOctokit(installation.id));
      } catch (err) {
        // one installation GitHub cannot answer for now (rate limit, outage) keeps what is known
        failed.push(installation.id);
        deps.log?.warn({ installationId: installation.id, err: describeError(err) }, "could not list the installation's repositories; kept as known");
        continue;
      }
    }
    const change = await transaction(deps.db, async (sql) => {
      await upsertInstallation(sql, installation);
      if (suspended) return { registered: [], removed: [] };
      return {
        registered: await registerRepositories(sql, installation.id, repos),
        removed: await removeRepositoriesExcept(sql, installation.id, repos.map((r) => r.id)),
      };
    });
    registered.push(...change.registered);
    removed.push(...change.removed);
  }
  const known = installations.map((i) => i.id);
  const gone = await transaction(deps.db, async (sql) => {
    const { rows } = await sql.query<{ id: number }>(
      `UPDATE installations SET deleted_at = now(), updated_at = now() WHERE deleted_at IS NULL AND NOT (id = ANY($1::bigint[])) RETURNING id`,
      [known],
    );
    const out: string[] = [];
    for (const row of rows) out.push(...(await removeRepositoriesExcept(sql, row.id, [])));
    return out;
  });
  removed.push(...gone);
  deps.log?.info({ installations: installations.length, registered: registered.length, removed: removed.length }, "installations reconciled");
  return { installations: installations.length, registered, removed, failed };
}

/** GET /installation/repositories, every page. */
async function listInstallationRepositories(octokit: Octokit): Promise<RepositoryInput[]> {
  const repos: RepositoryInput[] = [];
  let url: string | null = "/installation/repositories?per_page=100";
  for (let page = 0; url && page < 100; page++) {
    const response = await octokit.request(`GET ${url}`);
    repos.push(...(response.data as { repositories: RepositoryInput[] }).repositories);
    url = nextPageUrl(response.headers.link as string | undefined);
  }
  return repos;
}

async function upsertInstallation(sql: Sql, installation: InstallationInput): Promise<void> {
  await sql.query(
    `INSERT INTO installations (id, account_login, account_type, suspended_at, deleted_at, updated_at)
     VALUES ($1, $2, $3, $4, NULL, now())
     ON CONFLICT (id) DO UPDATE SET account_login = EXCLUDED.account_login, account_type = EXCLUDED.account_type,
       suspended_at = EXCLUDED.suspended_at, deleted_at = NULL, updated_at = now()`,
    [installation.id, installation.account.login, installation.account.type ?? "Organization", installation.suspended_at ? new Date(installation.suspended_at) : null],
  );
}

/** Registers repositories (again); returns the ones that were not registered before. */
async function registerRepositories(sql: Sql, installationId: number, repos: RepositoryInput[]): Promise<string[]> {
  const registered: string[] = [];
  for (const repo of repos) {
    const fullName = repo.full_name.toLowerCase();
    // a repository deleted and created again under the same name has a new id: retire the old row
    await sql.query(
      `UPDATE repositories SET full_name = full_name || '#' || id::text, removed_at = COALESCE(removed_at, now()), updated_at = now()
        WHERE full_name = $1 AND id <> $2`,
      [fullName, repo.id],
    );
    const { rows } = await sql.query<{ fresh: boolean }>(
      `INSERT INTO repositories (id, installation_id, full_name, private, default_branch, updated_at)
       VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (id) DO UPDATE SET installation_id = EXCLUDED.installation_id, full_name = EXCLUDED.full_name,
         private = EXCLUDED.private,
         default_branch = CASE WHEN $6 THEN EXCLUDED.default_branch ELSE repositories.default_branch END,
         removed_at = NULL, updated_at = now()
       RETURNING (xmax = 0) OR (SELECT removed_at IS NOT NULL FROM repositories r WHERE r.id = $1) AS fresh`,
      [repo.id, installationId, fullName, repo.private ?? false, repo.default_branch ?? "main", repo.default_branch !== undefined],
    );
    if (rows[0]?.fresh) registered.push(fullName);
  }
  return registered;
}

async function removeRepositories(sql: Sql, installationId: number, ids: number[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql.query<{ full_name: string }>(
    `UPDATE repositories SET removed_at = now(), updated_at = now()
      WHERE installation_id = $1 AND id = ANY($2::bigint[]) AND removed_at IS NULL RETURNING full_name`,
    [installationId, ids],
  );
  return rows.map((r) => r.full_name);
}

async function removeRepositoriesExcept(sql: Sql, installationId: number, keep: number[]): Promise<string[]> {
  const { rows } = await sql.query<{ full_name: string }>(
    `UPDATE repositories SET removed_at = now(), updated_at = now()
      WHERE installation_id = $1 AND NOT (id = ANY($2::bigint[])) AND removed_at IS NULL RETURNING full_name`,
    [installationId, keep],
  );
  return rows.map((r) => r.full_name);
}

/** A registered repository Atelier polls. */
export interface RegisteredRepository {
  id: number;
  installationId: number;
  fullName: string;
  defaultBranch: string;
  private: boolean;
}

/**
 * Whether a repository is polled: still in its installation, which is neither deleted nor
 * suspended. (The one place that question is answered.)
 */
const IS_POLLED = `r.removed_at IS NULL AND i.deleted_at IS NULL AND i.suspended_at IS NULL`;

/** Every repository Atelier polls now. */
export async function polledRepositories(db: Db): Promise<RegisteredRepository[]> {
  const { rows } = await db.pool.query<RegisteredRepository>(
    `SELECT r.id, r.installation_id AS "installationId", r.full_name AS "fullName", r.default_branch AS "defaultBranch", r.private
       FROM repositories r JOIN installations i ON i.id = r.installation_id
      WHERE ${IS_POLLED} ORDER BY r.full_name`,
  );
  return rows;
}

/** A polled repository with its adaptive poll interval (null: the shortest). */
export type DueRepository = RegisteredRepository & { pollIntervalS: number | null };

/**
 * Takes the polled repositories due for a probe at `now` (never probed, or their next_poll_at
 * reached): each is made due again only at `until`, so an overlapping tick, here or on another
 * worker, does not poll it twice, and one whose poll died with its process comes back then.
 */
export async function takeDueRepositories(db: Db, now: Date, until: Date): Promise<DueRepository[]> {
  const { rows } = await db.pool.query<DueRepository>(
    `UPDATE repositories r SET next_poll_at = $2
       FROM (SELECT r.id FROM repositories r JOIN installations i ON i.id = r.installation_id
              WHERE ${IS_POLLED} AND (r.next_poll_at IS NULL OR r.next_poll_at <= $1)
              FOR UPDATE OF r SKIP LOCKED) due
      WHERE r.id = due.id
  RETURNING r.id, r.installation_id AS "installationId", r.full_name AS "fullName", r.default_branch AS "defaultBranch", r.private,
            r.poll_interval_s AS "pollIntervalS"`,
    [now, until],
  );
  return rows.sort((a, b) => a.installationId - b.installationId || (a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0));
}

/** One repository if Atelier polls it, else null. */
export async function polledRepository(db: Db, fullName: string): Promise<RegisteredRepository | null> {
  const { rows } = await db.pool.query<RegisteredRepository>(
    `SELECT r.id, r.installation_id AS "installationId", r.full_name AS "fullName", r.default_branch AS "defaultBranch", r.private
       FROM repositories r JOIN installations i ON i.id = r.installation_id
      WHERE r.full_name = $1 AND ${IS_POLLED}`,
    [fullName.toLowerCase()],
  );
  return rows[0] ?? null;
}
