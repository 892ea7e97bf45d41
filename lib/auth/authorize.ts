import { ForbiddenError, UnauthorizedError } from "../errors";
import {
  listInstallationRepositories,
  listUserInstallations,
  repositoryRole,
  type RepoRole,
  type UserInstallation,
  type UserRepository,
} from "./github-user-api";
import { TtlCache } from "./ttl-cache";
import { viewerToken, type Viewer } from "./viewer";

/**
 * Who may do what on a repository, asked of GitHub with the person's own token: read needs the
 * repository to be visible to them, write needs push access (write, maintain or admin). Instance
 * admins (the instance config's `admins`) may do everything. Answers are cached briefly:
 * roles 60 s, the list of visible installations 30 s.
 */

export type Level = "read" | "write";

const RANK: Record<RepoRole, number> = { none: 0, read: 1, triage: 1, write: 2, maintain: 2, admin: 3 };
const NEED: Record<Level, number> = { read: 1, write: 2 };

export const ROLE_TTL_MS = 60_000;
export const VISIBLE_TTL_MS = 30_000;

const roles = new TtlCache<RepoRole>(ROLE_TTL_MS);
const visible = new TtlCache<{ installations: UserInstallation[]; repositories: UserRepository[] }>(VISIBLE_TTL_MS, 1_000);

export function requireViewer(viewer: Viewer | null): Viewer {
  if (!viewer) throw new UnauthorizedError("signed_out", "Sign in with GitHub to use the dashboard.");
  return viewer;
}

function tokenOf(viewer: Viewer): string {
  const token = viewerToken(viewer);
  if (!token) {
    throw new UnauthorizedError("github_token_missing", "Atelier has no GitHub token for you any more; sign out and sign in again.");
  }
  return token;
}

/** The viewer's role on `repo` (lower-cased owner/name); admins are "admin" everywhere. */
export async function repoRole(viewer: Viewer, repo: string): Promise<RepoRole> {
  if (viewer.admin) return "admin";
  const key = `${viewer.id}\u0000${repo.toLowerCase()}`;
  return roles.get(key, () => repositoryRole(tokenOf(viewer), repo, viewer.login));
}

/** Whether the viewer's role on `repo` reaches `level`. */
export async function hasRepoPermission(viewer: Viewer, repo: string, level: Level): Promise<boolean> {
  return RANK[await repoRole(viewer, repo)] >= NEED[level];
}

/**
 * Throws unless the signed-in viewer may `level` the repository: 401 `signed_out` without a
 * session, 403 `permission_denied` without the role.
 */
export async function requireRepoPermission(viewer: Viewer | null, repo: string, level: Level): Promise<Viewer> {
  const who = requireViewer(viewer);
  const role = await repoRole(who, repo);
  if (RANK[role] >= NEED[level]) return who;
  throw new ForbiddenError(
    "permission_denied",
    level === "write"
      ? `You need write access to ${repo} on GitHub to do this (you have ${role === "none" ? "no access" : `${role} access`}).`
      : `You cannot see ${repo} on GitHub, so Atelier does not show it to you.`,
    { repo, need: level, role },
  );
}

/** Throws unless the viewer is an instance admin. */
export function requireAdmin(viewer: Viewer | null): Viewer {
  const who = requireViewer(viewer);
  if (!who.admin) {
    throw new ForbiddenError("admin_only", "Only the instance's admins (atelier.config.yml `admins`) can do this.");
  }
  return who;
}

/**
 * The installations and repositories the viewer can see on GitHub (their token's view of the
 * App's installations). Not meaningful for admins, who see every registered repository.
 */
export async function visibleToViewer(viewer: Viewer): Promise<{ installations: UserInstallation[]; repositories: UserRepository[] }> {
  return visible.get(viewer.id, async () => {
    const token = tokenOf(viewer);
    const installations = await listUserInstallations(token);
    const lists = await Promise.all(installations.map((i) => listInstallationRepositories(token, i.id)));
    return { installations, repositories: lists.flat() };
  });
}

/** Forgets cached answers (tests; and a sign-in, which may come with new access). */
export function forgetAccess(viewerId?: string): void {
  if (viewerId === undefined) {
    roles.clear();
    visible.clear();
    return;
  }
  visible.delete(viewerId);
  roles.deletePrefix(`${viewerId}\u0000`);
}
