import { badCredentials, GitHubApiError } from "./api-error";
import { looksLikeJwt, verifyAppJwt } from "./jwt";
import type { SimAccount, SimInstallation, SimToken } from "./model";
import type { SimState } from "./state/sim-state";

export type Caller =
  | { kind: "anonymous"; key: "anonymous" }
  | { kind: "app"; key: "app" }
  | { kind: "installation"; key: string; token: SimToken; installation: SimInstallation }
  | { kind: "user"; key: string; token: SimToken; user: SimAccount };

/** The credential of an Authorization header: `token X`, `Bearer X` or Basic `user:X`. */
export function credentialOf(header: string | undefined): string | null {
  if (!header) return null;
  const [scheme = "", value = ""] = header.trim().split(/\s+/, 2);
  const kind = scheme.toLowerCase();
  if (kind === "token" || kind === "bearer") return value || null;
  if (kind === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? decoded.slice(colon + 1) || null : null;
  }
  return null;
}

/** Who is calling: an App JWT, an installation token, a user token, or nobody. */
export function authenticate(state: SimState, header: string | undefined): Caller {
  const credential = credentialOf(header);
  if (!credential) return { kind: "anonymous", key: "anonymous" };
  if (looksLikeJwt(credential)) {
    verifyAppJwt(credential, state.app, state.clock.now());
    return { kind: "app", key: "app" };
  }
  const token = state.tokens.get(credential);
  if (!token) throw badCredentials();
  if (token.expiresAt !== null && token.expiresAt <= state.clock.now()) throw badCredentials();
  if (token.kind === "installation" && token.installationId !== null) {
    const installation = state.installations.get(token.installationId);
    if (!installation) throw badCredentials();
    if (installation.suspendedAt !== null) throw new GitHubApiError(403, "This installation has been suspended");
    return { kind: "installation", key: `installation:${installation.id}`, token, installation };
  }
  if (token.userId === null) throw badCredentials();
  const user = state.account(token.userId);
  return { kind: "user", key: `user:${user.login}`, token, user };
}
