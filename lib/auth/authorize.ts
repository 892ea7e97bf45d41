import { ForbiddenError, NotFoundError, UnauthorizedError } from "../errors";
import {
  listInstallationRepositories,
  listUserInstallations,
  repositoryRole,
  type RepoRole,
  type UserInstallation,
  type UserRepository,
} from "../github/github-user-api";
import { TtlCache } from "./ttl-cache";
import { viewerToken, type Viewer } from "./viewer";

/**
 * Who may do what on a repository, asked of GitHub with the person's own token: read needs the
 * repository to be visible to them, write needs push access (write, maintain or admin). Instance
 * admins (the instance config's `admins`, by account id) may do everything. Answers are cached
 * briefly for reads — roles 60 s, the list of visible installations 30 s — and never for a write:
 * every write asks GitHub again, so a writer whose access was revoked is refused at once.
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

/**
 * The viewer's role on `repo` (lower-cased owner/name); admins are "admin" everywhere. `fresh`
 * asks GitHub now (and refreshes the cache): what a write decides on.
 */
export async function repoRole(viewer: Viewer, repo: string, options: { fresh?: boolean } = {}): Promise<RepoRole> {
  if (viewer.admin) return "admin";
  const key = `${viewer.id}\u0000${repo.toLowerCase()}`;
  if (options.fresh) roles.delete(key);
  return roles.get(key, () => repositoryRole(tokenOf(viewer), repo, viewer.login));
}

/** Whether the viewer's role on `repo` reaches `level`. */
export async function hasRepoPermission(viewer: Viewer, repo: string, level: Level): Promise<boolean> {
  return RANK[await repoRole(viewer, repo)] >= NEED[level];
}

/**
 * Throws unless the signed-in viewer may `level` the repository: 401 `signed_out` without a
 * session, 404 `repository_not_found` for a repository GitHub does not show them (the same
 * answer as for one that does not exist), 403 `permission_denied` without the role. A write
 * asks GitHub afresh.
 */
export async function requireRepoPermission(viewer: Viewer | null, repo: string, level: Level): Promise<Viewer> {
  const who = requireViewer(viewer);
  const role = await repoRole(who, repo, { fresh: level === "write" });
  if (RANK[role] >= NEED[level]) return who;
  if (role === "none") throw repositoryNotFound(repo);
  // only a write can get here (any role but none reads)
  throw new ForbiddenError("permission_denied", `You need write access to ${repo} on GitHub to do this (you have ${role} access).`, { repo, need: level, role });
}

/** What a person who cannot see a repository is told, whether it exists or not. */
export const repositoryNotFound = (repo: string): NotFoundError =>
  new NotFoundError("repository_not_found", `Atelier has nothing to show you of ${repo.toLowerCase()}: it is not registered, or GitHub does not show it to you.`);

/**
 * The name GitHub gives the repository of GitHub id `id` now, when it is among those GitHub lists
 * for the viewer through the App's installations (explicit access: a collaborator, a member) —
 * the dashboard's scope; null when it is not. Matched by id, never by name: a repository that
 * took a freed name is another repository (ADR 0070). On a public repository GitHub reports
 * `read` to anyone; its Runs (prompts, transcripts, costs) are still shown only to people with
 * explicit access (docs/security.md). An instance admin sees every repository, under `stored`.
 */
export async function visibleRepositoryName(viewer: Viewer, id: number | string | null, stored: string): Promise<string | null> {
  if (viewer.admin) return stored;
  if (id === null) return null;
  return (await visibleToViewer(viewer)).repositories.find((r) => String(r.id) === String(id))?.fullName ?? null;
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
