import { visibleToViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import type { Db } from "../store/db";

/**
 * The installations and repositories the viewer can see on GitHub, each with what Atelier knows
 * of it (registered, last poll, errors). Admins see every installation Atelier has.
 */
export interface RepositoryView {
  fullName: string;
  private: boolean;
  registered: boolean;
  lastPolledAt: string | null;
  pollError: string | null;
  configError: string | null;
  loops: number;
}

export interface InstallationView {
  id: number;
  account: string;
  accountType: string;
  suspended: boolean;
  repositories: RepositoryView[];
}

interface RepoRow {
  full_name: string;
  installation_id: number;
  private: boolean;
  last_polled_at: Date | null;
  poll_error: string | null;
  config_error: string | null;
  loops: number;
}

const REPO_COLUMNS = `full_name, installation_id, private, last_polled_at, poll_error, config_error,
  COALESCE(jsonb_array_length(CASE WHEN jsonb_typeof(config->'loops') = 'array' THEN config->'loops' END), 0) AS loops`;

function view(r: RepoRow | undefined, fullName: string, isPrivate: boolean): RepositoryView {
  return {
    fullName,
    private: r?.private ?? isPrivate,
    registered: !!r,
    lastPolledAt: r?.last_polled_at?.toISOString() ?? null,
    pollError: r?.poll_error ?? null,
    configError: r?.config_error ?? null,
    loops: r?.loops ?? 0,
  };
}

export async function loadInstallations(db: Db, viewer: Viewer): Promise<InstallationView[]> {
  if (viewer.admin) {
    const [installations, repos] = await Promise.all([
      db.pool.query<{ id: number; account_login: string; account_type: string; suspended_at: Date | null }>(
        `SELECT id, account_login, account_type, suspended_at FROM installations WHERE deleted_at IS NULL ORDER BY account_login`,
      ),
      db.pool.query<RepoRow>(`SELECT ${REPO_COLUMNS} FROM repositories WHERE removed_at IS NULL ORDER BY full_name`),
    ]);
    return installations.rows.map((i) => ({
      id: i.id,
      account: i.account_login,
      accountType: i.account_type,
      suspended: i.suspended_at !== null,
      repositories: repos.rows.filter((r) => r.installation_id === i.id).map((r) => view(r, r.full_name, r.private)),
    }));
  }
  const visible = await visibleToViewer(viewer);
  const names = visible.repositories.map((r) => r.fullName);
  const { rows } = names.length
    ? await db.pool.query<RepoRow>(`SELECT ${REPO_COLUMNS} FROM repositories WHERE removed_at IS NULL AND full_name = ANY($1)`, [names])
    : { rows: [] as RepoRow[] };
  const known = new Map(rows.map((r) => [r.full_name, r]));
  const suspended = new Set(
    (
      await db.pool.query<{ id: number }>(`SELECT id FROM installations WHERE suspended_at IS NOT NULL AND id = ANY($1::bigint[])`, [
        visible.installations.map((i) => i.id),
      ])
    ).rows.map((r) => r.id),
  );
  return visible.installations.map((i) => ({
    id: i.id,
    account: i.account,
    accountType: i.accountType,
    suspended: suspended.has(i.id),
    repositories: visible.repositories
      .filter((r) => r.installationId === i.id)
      .map((r) => view(known.get(r.fullName), r.fullName, r.private)),
  }));
}
