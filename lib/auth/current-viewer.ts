import type { Db } from "../store/kernel/db";
import type { StoredUser } from "../store/people/users";
import { configAccountIds } from "./config-accounts";
import { allowedAccountIds, allowedBy } from "./allowed-orgs";
import { bearerOf, userOfApiToken, type TokenScope } from "./api-tokens";
import { visibleToViewer } from "./authorize";
import { authSecret } from "./auth-secret";
import { instanceConfig } from "./instance-config";
import { userWithToken } from "./sessions";
import { makeViewer, sessionTokenOf, type Viewer } from "./viewer";

/** The signed-in viewer of a request's Cookie header, or null when signed out or expired. */
export async function viewerFromCookieHeader(db: Db, cookieHeader: string | null | undefined): Promise<Viewer | null> {
  const token = sessionTokenOf(cookieHeader);
  if (!token) return null;
  const found = await userWithToken(db, token, authSecret());
  return found ? viewerOf(db, found.user, found.token) : null;
}

/**
 * The viewer of an API request: an `Authorization: Bearer` API token's person (with the token's
 * scope; a bad token is a 401, never a fall-back to the cookie), else the session cookie's.
 */
export async function viewerFromApiRequest(db: Db, headers: Headers): Promise<{ viewer: Viewer | null; scope: TokenScope | null }> {
  const bearer = bearerOf(headers.get("authorization"));
  if (bearer === null) return { viewer: await viewerFromCookieHeader(db, headers.get("cookie")), scope: null };
  const found = await userOfApiToken(db, bearer, authSecret());
  return { viewer: await viewerOf(db, found.user, found.githubToken), scope: found.scope };
}

async function viewerOf(db: Db, user: StoredUser, githubToken: string | null): Promise<Viewer | null> {
  const config = await instanceConfig();
  const viewer = makeViewer(user, githubToken, await configAccountIds(db, config.admins, githubToken));
  // allowed_orgs holds for sessions opened before it was set too (the installations seen are cached 30 s)
  const allowed = viewer.admin ? null : await allowedAccountIds(db, config, githubToken);
  if (allowed && !allowedBy(allowed, viewer.id, (await visibleToViewer(viewer)).installations)) return null;
  return viewer;
}
