import { repoRole, repositoryNotFound, requireViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import { scopeRepos } from "../auth/viewer-scope";
import { ForbiddenError, type NotFoundError } from "../errors";
import type { Db } from "../store/kernel/db";
import type { HookInput, HookOwner } from "./hooks";

/**
 * Who manages outbound webhooks: an installation's hooks, the instance's admins; a Loop's hooks,
 * the admins of its repository on GitHub too. The same rule decides who sees which deliveries.
 */

/**
 * Throws unless the viewer may manage the hooks of `owner` (a write asks GitHub afresh). One
 * who may not even know of them (no access to the repository on GitHub; anyone but an admin,
 * for an installation's hooks) gets `unseen`: the answer for a hook or delivery that does not
 * exist, so ids tried one by one tell a stranger nothing.
 */
export async function requireHookManager(viewer: Viewer | null, owner: HookOwner, options: { write?: boolean; unseen: NotFoundError }): Promise<Viewer> {
  const who = requireViewer(viewer);
  if (who.admin) return who;
  if (owner.kind !== "loop") throw options.unseen;
  return requireRepoAdmin(who, owner.repo, options.write ?? false, options.unseen);
}

/**
 * Throws unless the viewer may add the hook `input` asks for, before anything is looked up:
 * whether a repository is registered is told only to those who can see it on GitHub.
 */
export async function requireHookCreator(viewer: Viewer | null, input: HookInput): Promise<Viewer> {
  const who = requireViewer(viewer);
  if (who.admin) return who;
  if ("instance" in input) throw new ForbiddenError("admin_only", "Only the instance's admins (atelier.config.yml `admins`) manage the instance's targets.");
  if ("installation_id" in input) {
    throw new ForbiddenError("admin_only", "Only the instance's admins (atelier.config.yml `admins`) manage an installation's webhooks.", { installation_id: input.installation_id });
  }
  return requireRepoAdmin(who, input.repo, true, repositoryNotFound(input.repo));
}

async function requireRepoAdmin(who: Viewer, repo: string, fresh: boolean, unseen: NotFoundError): Promise<Viewer> {
  const role = await repoRole(who, repo, { fresh }).catch(() => "none" as const);
  if (role === "admin") return who;
  if (role === "none") throw unseen;
  throw new ForbiddenError("repo_admin_only", `Only admins of ${repo} on GitHub (or the instance's admins) manage its Loops' webhooks.`, { repo });
}

/**
 * The hooks and deliveries a viewer may see, as a filter for listHooks / listDeliveries:
 * everything for an admin (nulls), else the Loop hooks of the repositories they administer.
 */
export async function hookScope(db: Db, viewer: Viewer | null): Promise<{ installationIds: number[] | null; repos: string[] | null }> {
  const who = requireViewer(viewer);
  if (who.admin) return { installationIds: null, repos: null };
  const repos = await scopeRepos(db, who);
  const roles = await Promise.all(repos.map((r) => repoRole(who, r).catch(() => "none")));
  return { installationIds: [], repos: repos.filter((_, i) => roles[i] === "admin") };
}
