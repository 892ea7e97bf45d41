import type { StoredUser } from "../store/people/users";

/**
 * The signed-in person, as the dashboard's pages and API see them. Their GitHub token is kept
 * beside the object, not on it: a Viewer can be rendered, serialized or logged without ever
 * carrying the token.
 */
export interface Viewer {
  id: string;
  login: string;
  name: string | null;
  avatarUrl: string | null;
  /** One of the instance config's `admins`, by GitHub account id (lib/auth/config-accounts.ts): may see and act on every registered repository. */
  admin: boolean;
}

const TOKENS = new WeakMap<Viewer, string | null>();

export function makeViewer(user: StoredUser, token: string | null, adminIds: ReadonlySet<string>): Viewer {
  const viewer: Viewer = Object.freeze({
    id: user.id,
    login: user.login,
    name: user.name,
    avatarUrl: user.avatarUrl,
    admin: adminIds.has(user.id),
  });
  TOKENS.set(viewer, token);
  return viewer;
}

/** The viewer's GitHub OAuth token, for GitHub calls made on their behalf (server side only). */
export function viewerToken(viewer: Viewer): string | null {
  return TOKENS.get(viewer) ?? null;
}

/** The next-auth session cookie, plain (http) and with the __Secure- prefix (https). */
export const SESSION_COOKIES = ["__Secure-authjs.session-token", "authjs.session-token"] as const;

/** The session token of a Cookie header, or null. */
export function sessionTokenOf(cookieHeader: string | null | undefined): string | null {
  if (!cookieHeader) return null;
  const jar = new Map<string, string>();
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!jar.has(name)) jar.set(name, part.slice(eq + 1).trim());
  }
  for (const name of SESSION_COOKIES) {
    const value = jar.get(name);
    if (value) {
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    }
  }
  return null;
}
