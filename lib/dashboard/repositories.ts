import { visibleToViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import type { Db } from "../store/kernel/db";
import {
  listInstallations,
  listRegisteredRepositories,
  registeredRepositoriesAmong,
  suspendedInstallationIds,
  type RepositoryListRow,
} from "../store/reads/repository-list";

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

function view(r: RepositoryListRow | undefined, fullName: string, isPrivate: boolean): RepositoryView {
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
      listInstallations(db),
      listRegisteredRepositories(db),
    ]);
    return installations.map((i) => ({
      id: i.id,
      account: i.account_login,
      accountType: i.account_type,
      suspended: i.suspended_at !== null,
      repositories: repos.filter((r) => r.installation_id === i.id).map((r) => view(r, r.full_name, r.private)),
    }));
  }
  const visible = await visibleToViewer(viewer);
  const names = visible.repositories.map((r) => r.fullName);
  const known = new Map((names.length ? await registeredRepositoriesAmong(db, names) : []).map((r) => [r.full_name, r]));
  const suspended = new Set(await suspendedInstallationIds(db, visible.installations.map((i) => i.id)));
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
