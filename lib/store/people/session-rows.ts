import { createHash } from "node:crypto";
import type { Db } from "../kernel/db";
import { first, sql } from "../kernel/sql";
import { toUser, toUserWithSealedToken, USER_COLUMNS, type StoredUser, type UserRow, type UserWithSealedToken } from "./users";

/**
 * Dashboard sessions (`sessions`): the storage behind the sign-in library's database sessions
 * (app/_server/auth.ts adapts it) and the one place the API and the pages read a session from.
 * A session is live until its `expires`, by Postgres's clock.
 */

export interface StoredSession {
  sessionToken: string;
  userId: string;
  expires: Date;
}

/**
 * What the `sessions` table keeps of a session token: its SHA-256 (hex), never the token the
 * browser holds, so a database dump opens no session. Migration 20261201310000 hashed the
 * rows stored before.
 */
const stored = (sessionToken: string): string => createHash("sha256").update(sessionToken, "utf8").digest("hex");

export async function createSession(db: Db, session: StoredSession): Promise<StoredSession> {
  await db.prisma.session.create({ data: { sessionToken: stored(session.sessionToken), userId: session.userId, expires: session.expires } });
  return session;
}

export async function getSessionAndUser(db: Db, sessionToken: string): Promise<{ session: StoredSession; user: StoredUser } | null> {
  const row = await first<UserRow & { expires: Date }>(
    db.pool,
    sql`SELECT ${USER_COLUMNS}, s.expires
          FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.session_token = ${stored(sessionToken)} AND s.expires > now()`,
  );
  if (!row) return null;
  return { session: { sessionToken, userId: row.id, expires: row.expires }, user: toUser(row) };
}

/** Moves the session's expiry (an undefined one keeps it); null when there is no such session. */
export async function updateSession(db: Db, sessionToken: string, expires: Date | undefined): Promise<StoredSession | null> {
  const row = await first<{ user_id: string; expires: Date }>(
    db.pool,
    sql`UPDATE sessions SET expires = COALESCE(${expires ?? null}, expires) WHERE session_token = ${stored(sessionToken)} RETURNING user_id, expires`,
  );
  return row ? { sessionToken, userId: row.user_id, expires: row.expires } : null;
}

export async function deleteSession(db: Db, sessionToken: string): Promise<void> {
  await db.prisma.session.deleteMany({ where: { sessionToken: stored(sessionToken) } });
}

/** The user of a live session, with their GitHub token as stored (sealed). */
export async function sessionUserWithSealedToken(db: Db, sessionToken: string): Promise<UserWithSealedToken | null> {
  const row = await first<UserRow & { token: string | null }>(
    db.pool,
    sql`SELECT ${USER_COLUMNS}, u.token FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.session_token = ${stored(sessionToken)} AND s.expires > now()`,
  );
  return row ? toUserWithSealedToken(row) : null;
}
