import type { Db } from "../kernel/db";
import { raw, rows, sql } from "../kernel/sql";

/** The registered repositories as the dashboard lists them: names, installations, poll and config state. */

/**
 * The names of the registered repositories (of the GitHub ids `ids`, when given), sorted: the
 * names Atelier's rows carry for them now, whatever GitHub calls a repository now (ADR 0070).
 */
export async function registeredRepoNames(db: Db, ids?: readonly number[]): Promise<string[]> {
  const found = await db.prisma.repository.findMany({
    where: { removedAt: null, ...(ids ? { id: { in: ids.map((id) => BigInt(id)) } } : {}) },
    select: { fullName: true },
    orderBy: { fullName: "asc" },
  });
  return found.map((r) => r.fullName);
}

export interface InstallationRow {
  id: number;
  account_login: string;
  account_type: string;
  suspended_at: Date | null;
}

/** Every installation Atelier has (not deleted), by account. */
export async function listInstallations(db: Db): Promise<InstallationRow[]> {
  return rows<InstallationRow>(
    db.pool,
    sql`SELECT id, account_login, account_type, suspended_at FROM installations WHERE deleted_at IS NULL ORDER BY account_login`,
  );
}

/** The installations of `ids` that are suspended. */
export async function suspendedInstallationIds(db: Db, ids: number[]): Promise<number[]> {
  const found = await rows<{ id: number }>(db.pool, sql`SELECT id FROM installations WHERE suspended_at IS NOT NULL AND id = ANY(${ids}::bigint[])`);
  return found.map((r) => r.id);
}

export interface RepositoryListRow {
  full_name: string;
  installation_id: number;
  private: boolean;
  last_polled_at: Date | null;
  poll_error: string | null;
  config_error: string | null;
  /** how many Loops its config lists */
  loops: number;
}

const REPO_COLUMNS = raw(`full_name, installation_id, private, last_polled_at, poll_error, config_error,
  COALESCE(jsonb_array_length(CASE WHEN jsonb_typeof(config->'loops') = 'array' THEN config->'loops' END), 0) AS loops`);

/** The registered repositories, by name. */
export async function listRegisteredRepositories(db: Db): Promise<RepositoryListRow[]> {
  return rows<RepositoryListRow>(db.pool, sql`SELECT ${REPO_COLUMNS} FROM repositories WHERE removed_at IS NULL ORDER BY full_name`);
}

/** The registered repositories among `names` (in no order). */
export async function registeredRepositoriesAmong(db: Db, names: string[]): Promise<RepositoryListRow[]> {
  return rows<RepositoryListRow>(db.pool, sql`SELECT ${REPO_COLUMNS} FROM repositories WHERE removed_at IS NULL AND full_name = ANY(${names})`);
}

export interface RepositoryPollRow {
  full_name: string;
  last_polled_at: Date | null;
  poll_error: string | null;
  /** when `.github/atelier.yml` was last read (ISO text), null before the first read */
  read_at: string | null;
  config_error: string | null;
}

/** The last poll and config read of the repositories of `repos`, by name. */
export async function repositoryPolls(db: Db, repos: string[]): Promise<RepositoryPollRow[]> {
  return rows<RepositoryPollRow>(
    db.pool,
    sql`SELECT full_name, last_polled_at, poll_error, config->>'readAt' AS read_at, config_error
         FROM repositories WHERE full_name = ANY(${repos}) ORDER BY full_name`,
  );
}

/** The GitHub ids of the registered repositories among `names` (owner/name, lower-cased), by name. */
export async function repositoryIdsByName(db: Db, names: readonly string[]): Promise<Map<string, string>> {
  const found = await rows<{ full_name: string; id: string }>(
    db.pool,
    sql`SELECT full_name, id::text AS id FROM repositories WHERE removed_at IS NULL AND full_name = ANY(${names.map((n) => n.toLowerCase())})`,
  );
  return new Map(found.map((r) => [r.full_name, r.id]));
}
