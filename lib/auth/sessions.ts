import { randomBytes } from "node:crypto";
import type { Db } from "../store/kernel/db";
import { createSession, sessionUserWithSealedToken, type StoredSession } from "../store/people/session-rows";
import { storeSealedUserToken, type StoredUser } from "../store/people/users";
import { openToken, sealToken } from "../secrets/token-box";

/**
 * A person's sessions and GitHub token as the sign-in library (app/_server/auth.ts), the pages
 * and the API use them: a fresh session token, the token sealed under AUTH_SECRET before it is
 * stored and opened only when it is read back server side. The rows are lib/store/people/session-rows.ts
 * and lib/store/people/users.ts.
 */

/** 30 days, like GitHub's own "remember me". */
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 60 * 60;

/** A fresh session for `userId` (the tests and the sign-in library both come through here). */
export async function openSession(db: Db, userId: string, maxAgeSeconds = SESSION_MAX_AGE_SECONDS): Promise<StoredSession> {
  return createSession(db, {
    sessionToken: randomBytes(32).toString("base64url"),
    userId,
    expires: new Date(Date.now() + maxAgeSeconds * 1000),
  });
}

/** Stores the user's GitHub OAuth token, sealed; it is read back only by `userWithToken`. */
export async function storeUserToken(db: Db, userId: string, token: string | null, secret: string): Promise<void> {
  await storeSealedUserToken(db, userId, token ? sealToken(token, secret) : null);
}

/** The signed-in user of a session token, with their GitHub token (server side only). */
export async function userWithToken(db: Db, sessionToken: string, secret: string): Promise<{ user: StoredUser; token: string | null } | null> {
  const found = await sessionUserWithSealedToken(db, sessionToken);
  return found ? { user: found.user, token: openToken(found.sealedToken, secret) } : null;
}
