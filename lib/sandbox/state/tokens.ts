import { GitHubApiError, validationFailed } from "../api-error";
import { HOUR_MS } from "../sim-clock";
import type { AccessLevel, AppPermissions, SimInstallation, SimToken } from "../model";
import type { SimState } from "./sim-state";

export const INSTALLATION_TOKEN_TTL_MS = HOUR_MS;

const RANK: Record<AccessLevel, number> = { read: 1, write: 2 };

export function grants(permissions: AppPermissions, name: string, level: AccessLevel): boolean {
  const has = permissions[name];
  return has !== undefined && RANK[has] >= RANK[level];
}

export interface TokenRequest {
  repositories?: string[];
  repository_ids?: number[];
  permissions?: AppPermissions;
}

/** POST /app/installations/{id}/access_tokens: a one-hour token, optionally narrowed. */
export function mintInstallationToken(state: SimState, installation: SimInstallation, request: TokenRequest): SimToken {
  if (installation.suspendedAt !== null) throw new GitHubApiError(403, "This installation has been suspended");
  const available = state.installationRepos(installation);
  let repoIds: Set<number> | null = null;
  if (request.repositories !== undefined || request.repository_ids !== undefined) {
    repoIds = new Set();
    for (const name of request.repositories ?? []) {
      const repo = available.find((r) => r.name.toLowerCase() === String(name).toLowerCase());
      if (!repo) throw validationFailed([], "There is at least one repository that does not exist or is not accessible to the parent installation.");
      repoIds.add(repo.id);
    }
    for (const id of request.repository_ids ?? []) {
      if (!available.some((r) => r.id === id)) throw validationFailed([], "There is at least one repository that does not exist or is not accessible to the parent installation.");
      repoIds.add(id);
    }
  }
  let permissions: AppPermissions = { ...installation.permissions };
  if (request.permissions !== undefined) {
    permissions = {};
    for (const [name, level] of Object.entries(request.permissions)) {
      if (level !== "read" && level !== "write") throw validationFailed([{ resource: "Token", field: `permissions.${name}`, code: "invalid", value: level }]);
      if (!grants(installation.permissions, name, level)) throw validationFailed([], "The permissions requested are not granted to this installation.");
      permissions[name] = level;
    }
    if (installation.permissions.metadata) permissions.metadata = "read";
  }
  const now = state.clock.now();
  const token: SimToken = {
    token: state.newSecret("ghs_"),
    kind: "installation",
    installationId: installation.id,
    userId: null,
    createdAt: now,
    expiresAt: now + INSTALLATION_TOKEN_TTL_MS,
    repoIds,
    permissions,
  };
  state.tokens.set(token.token, token);
  return token;
}

/** An OAuth user-to-server token: it acts with the user's permissions. */
export function mintUserToken(state: SimState, userId: number): SimToken {
  const token: SimToken = {
    token: state.newSecret("ghu_"),
    kind: "user",
    installationId: null,
    userId,
    createdAt: state.clock.now(),
    expiresAt: null,
    repoIds: null,
    permissions: {},
  };
  state.tokens.set(token.token, token);
  return token;
}
