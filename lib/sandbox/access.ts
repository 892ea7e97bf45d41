import { GitHubApiError, notAccessibleByIntegration, notFound, requiresAuthentication } from "./api-error";
import type { Caller } from "./auth";
import { ROLE_RANK, type AccessLevel, type RepoPermission, type SimRepo } from "./model";
import type { SimState } from "./state/sim-state";
import { grants } from "./state/tokens";

/** What a route needs: App permissions (any of them) at a level, and a person's role. */
export interface Need {
  permission: string | string[];
  level: AccessLevel;
  /** The role a user token needs; defaults to `read` for reads and `write` for writes. */
  role?: "read" | "write" | "admin";
}


/** Repository ids an installation token may touch right now. */
export function tokenRepoIds(state: SimState, caller: Extract<Caller, { kind: "installation" }>): Set<number> {
  const ids = state.installationRepos(caller.installation).map((r) => r.id);
  const narrowed = caller.token.repoIds;
  return new Set(narrowed ? ids.filter((id) => narrowed.has(id)) : ids);
}

/** Can the caller see this repository at all? GitHub answers 404 when it cannot. */
export function canSee(state: SimState, caller: Caller, repo: SimRepo): boolean {
  switch (caller.kind) {
    case "installation":
      return tokenRepoIds(state, caller).has(repo.id);
    case "user":
      return state.permissionOf(repo, caller.user.id) !== "none";
    default:
      return !repo.private;
  }
}

/** The caller's role on the repository, as GET /collaborators/{u}/permission would say. */
export function roleOf(state: SimState, caller: Caller, repo: SimRepo): RepoPermission {
  if (caller.kind === "user") return state.permissionOf(repo, caller.user.id);
  if (caller.kind === "installation" && canSee(state, caller, repo)) return "write";
  return repo.private ? "none" : "read";
}

/**
 * Finds the repository and checks the caller may do this to it: unknown or out of scope →
 * 404; visible but without the App permission → 403 "Resource not accessible by
 * integration"; a user without the role → 403.
 */
export function authorizeRepo(state: SimState, caller: Caller, owner: string, name: string, need: Need): SimRepo {
  const repo = state.findRepo(owner, name);
  if (!repo) throw notFound();
  if (caller.kind === "anonymous" && repo.private) throw notFound();
  if (caller.kind === "app") throw new GitHubApiError(403, "Resource not accessible by integration");
  if (!canSee(state, caller, repo)) throw notFound();
  if (caller.kind === "installation") {
    const names = Array.isArray(need.permission) ? need.permission : [need.permission];
    if (!names.some((p) => grants(caller.token.permissions, p, need.level))) throw notAccessibleByIntegration();
  }
  if (caller.kind === "user") {
    const role = need.role ?? need.level;
    const has = state.permissionOf(repo, caller.user.id);
    if (ROLE_RANK[has] < ROLE_RANK[role]) {
      throw new GitHubApiError(403, role === "admin" ? "Must have admin rights to Repository." : "Must have push access to repository");
    }
  }
  if (caller.kind === "anonymous" && need.level === "write") throw requiresAuthentication();
  return repo;
}

/** The account that acts for the caller (the App's bot for an installation). */
export function actorId(state: SimState, caller: Caller): number {
  if (caller.kind === "user") return caller.user.id;
  if (caller.kind === "installation") return state.app.botUserId;
  throw requiresAuthentication();
}
