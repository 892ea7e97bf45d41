import type { Db } from "../store/db";
import { adminAccountIds } from "./admins";
import { allowedBy } from "./allowed-orgs";
import { visibleToViewer } from "./authorize";
import { authSecret } from "./auth-secret";
import { instanceConfig } from "./instance-config";
import { userWithToken } from "./session-store";
import { makeViewer, sessionTokenOf, type Viewer } from "./viewer";

/** The signed-in viewer of a request's Cookie header, or null when signed out or expired. */
export async function viewerFromCookieHeader(db: Db, cookieHeader: string | null | undefined): Promise<Viewer | null> {
  const token = sessionTokenOf(cookieHeader);
  if (!token) return null;
  const found = await userWithToken(db, token, authSecret());
  if (!found) return null;
  const config = await instanceConfig();
  const viewer = makeViewer(found.user, found.token, await adminAccountIds(db, config.admins, found.token));
  // allowed_orgs holds for sessions opened before it was set too (the installations seen are cached 30 s)
  if (!viewer.admin && config.allowedOrgs?.length && !allowedBy(config, viewer.login, (await visibleToViewer(viewer)).installations)) return null;
  return viewer;
}
