import { systemClock, type Clock } from "./clock";

/** What an installation token may be narrowed to (POST /app/installations/{id}/access_tokens). */
export interface TokenScope {
  /** GitHub ids of the repositories: a token for a repository by name would be for whichever holds the name now (ADR 0070). */
  repositoryIds?: number[];
  permissions?: Record<string, "read" | "write">;
}

export interface InstallationToken {
  /** Never log it. */
  token: string;
  expiresAt: Date;
}

export type MintToken = (installationId: number, scope: TokenScope) => Promise<InstallationToken>;

/** Tokens are renewed this long before GitHub expires them. */
export const TOKEN_RENEW_MARGIN_MS = 5 * 60_000;

/**
 * Installation tokens, cached per (installation, scope) and minted again when less than the
 * margin is left; concurrent asks for the same scope share one mint.
 */
export class InstallationTokens {
  private readonly cache = new Map<string, InstallationToken>();
  private readonly inflight = new Map<string, Promise<InstallationToken>>();

  constructor(
    private readonly mint: MintToken,
    private readonly clock: Clock = systemClock,
    private readonly marginMs = TOKEN_RENEW_MARGIN_MS,
  ) {}

  async get(installationId: number, scope: TokenScope = {}): Promise<InstallationToken> {
    const key = scopeKey(installationId, scope);
    const cached = this.cache.get(key);
    if (cached && isFresh(cached, this.clock.now(), this.marginMs)) return cached;
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.mint(installationId, scope)
        .then((token) => {
          this.cache.set(key, token);
          return token;
        })
        .finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  /** Forgets a token GitHub refused (401), so the next ask mints a new one. */
  invalidate(installationId: number, scope: TokenScope = {}): void {
    this.cache.delete(scopeKey(installationId, scope));
  }

  /** Forgets every token of an installation (deleted, suspended, permissions changed). */
  forgetInstallation(installationId: number): void {
    for (const key of this.cache.keys()) if (key.startsWith(`${installationId}|`)) this.cache.delete(key);
  }
}

/** Whether a token still has more than the margin left. */
export function isFresh(token: InstallationToken, now: number, marginMs = TOKEN_RENEW_MARGIN_MS): boolean {
  return token.expiresAt.getTime() - now > marginMs;
}

function scopeKey(installationId: number, scope: TokenScope): string {
  const repos = scope.repositoryIds ? [...scope.repositoryIds].sort((a, b) => a - b).join(",") : "*";
  const perms = scope.permissions
    ? Object.entries(scope.permissions)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}=${v}`)
        .join(",")
    : "*";
  return `${installationId}|${repos}|${perms}`;
}
