import { repoRole, requireViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import { scopeRepos } from "../dashboard/scope";
import { ForbiddenError } from "../errors";
import type { Db } from "../store/db";
import type { HookOwner } from "./hooks";

/**
 * Who manages outbound webhooks: an installation's hooks, the instance's admins; a Loop's hooks,
 * the admins of its repository on GitHub too. The same rule decides who sees which deliveries.
 */

/** `fresh`: ask GitHub now, as a write does (a read may use the cached role). */
export async function canManageHooks(viewer: Viewer, owner: HookOwner, options: { fresh?: boolean } = {}): Promise<boolean> {
  if (viewer.admin) return true;
  if (owner.kind === "installation") return false;
  return (await repoRole(viewer, owner.repo, options).catch(() => "none")) === "admin";
}

export async function requireHookManager(viewer: Viewer | null, owner: HookOwner, options: { write?: boolean } = {}): Promise<Viewer> {
  const who = requireViewer(viewer);
  if (await canManageHooks(who, owner, { fresh: options.write ?? false })) return who;
  throw new ForbiddenError(
    owner.kind === "installation" ? "admin_only" : "repo_admin_only",
    owner.kind === "installation"
      ? "Only the instance's admins (atelier.config.yml `admins`) manage an installation's webhooks."
      : `Only admins of ${owner.repo} on GitHub (or the instance's admins) manage its Loops' webhooks.`,
    owner.kind === "loop" ? { repo: owner.repo } : { installation_id: owner.installationId },
  );
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
