import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../store/db";
import { openToken, sealToken } from "./token-box";

/**
 * Dashboard users and their sessions, in Postgres (`users`, `sessions`). A user's id is their
 * GitHub user id, so the GitHub account is the only "account" there is. This is the storage
 * behind the sign-in library's database sessions (app/_server/auth.ts adapts it) and the one
 * place the API and the pages read a session from.
 */

export interface StoredUser {
  /** The GitHub user id, as text. */
  id: string;
  login: string;
  name: string | null;
  avatarUrl: string | null;
}

export interface StoredSession {
  sessionToken: string;
  userId: string;
  expires: Date;
}

/** What GitHub says about the person signing in. */
export interface GitHubIdentity {
  githubId: string;
  login: string;
  name: string | null;
  avatarUrl: string | null;
}

interface UserRow {
  id: string;
  login: string;
  name: string | null;
  avatar_url: string | null;
}

const toUser = (r: UserRow): StoredUser => ({ id: r.id, login: r.login, name: r.name, avatarUrl: r.avatar_url });

/**
 * What the `sessions` table keeps of a session token: its SHA-256 (hex), never the token the
 * browser holds, so a database dump opens no session. Migration 20261201310000 hashed the
 * rows stored before.
 */
const stored = (sessionToken: string): string => createHash("sha256").update(sessionToken, "utf8").digest("hex");

/** 30 days, like GitHub's own "remember me". */
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 60 * 60;

/**
 * Creates or refreshes the user of a GitHub identity. A login that now belongs to another
 * GitHub account (a rename, then someone took the old name) is released from the stale row.
 */
export async function upsertUser(db: Db, who: GitHubIdentity): Promise<StoredUser> {
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(`DELETE FROM users WHERE lower(login) = lower($1) AND id <> $2`, [who.login, who.githubId]);
    const { rows } = await client.query<UserRow>(
      `INSERT INTO users (id, login, name, avatar_url) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET login = EXCLUDED.login, name = EXCLUDED.name, avatar_url = EXCLUDED.avatar_url
       RETURNING id, login, name, avatar_url`,
      [who.githubId, who.login, who.name, who.avatarUrl],
    );
    await client.query("COMMIT");
    return toUser(rows[0]!);
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export async function getUser(db: Db, id: string): Promise<StoredUser | null> {
  const { rows } = await db.pool.query<UserRow>(`SELECT id, login, name, avatar_url FROM users WHERE id = $1`, [id]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function updateUserProfile(
  db: Db,
  id: string,
  patch: { name?: string | null; avatarUrl?: string | null },
): Promise<StoredUser | null> {
  const { rows } = await db.pool.query<UserRow>(
    `UPDATE users SET name = CASE WHEN $2 THEN $3 ELSE name END, avatar_url = CASE WHEN $4 THEN $5 ELSE avatar_url END
      WHERE id = $1 RETURNING id, login, name, avatar_url`,
    [id, patch.name !== undefined, patch.name ?? null, patch.avatarUrl !== undefined, patch.avatarUrl ?? null],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

/** Stores the user's GitHub OAuth token, sealed; it is read back only by `userWithToken`. */
export async function storeUserToken(db: Db, userId: string, token: string | null, secret: string): Promise<void> {
  await db.pool.query(`UPDATE users SET token = $2 WHERE id = $1`, [userId, token ? sealToken(token, secret) : null]);
}

export async function createSession(db: Db, session: StoredSession): Promise<StoredSession> {
  await db.pool.query(`INSERT INTO sessions (session_token, user_id, expires) VALUES ($1, $2, $3)`, [
    stored(session.sessionToken),
    session.userId,
    session.expires,
  ]);
  return session;
}

/** A fresh session for `userId` (the tests and the sign-in library both come through here). */
export async function openSession(db: Db, userId: string, maxAgeSeconds = SESSION_MAX_AGE_SECONDS): Promise<StoredSession> {
  return createSession(db, {
    sessionToken: randomBytes(32).toString("base64url"),
    userId,
    expires: new Date(Date.now() + maxAgeSeconds * 1000),
  });
}

export async function getSessionAndUser(db: Db, sessionToken: string): Promise<{ session: StoredSession; user: StoredUser } | null> {
  const { rows } = await db.pool.query<UserRow & { expires: Date }>(
    `SELECT u.id, u.login, u.name, u.avatar_url, s.expires
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.session_token = $1 AND s.expires > now()`,
    [stored(sessionToken)],
  );
  const row = rows[0];
  if (!row) return null;
  return { session: { sessionToken, userId: row.id, expires: row.expires }, user: toUser(row) };
}

export async function updateSession(db: Db, sessionToken: string, expires: Date | undefined): Promise<StoredSession | null> {
  const { rows } = await db.pool.query<{ user_id: string; expires: Date }>(
    `UPDATE sessions SET expires = COALESCE($2, expires) WHERE session_token = $1 RETURNING user_id, expires`,
    [stored(sessionToken), expires ?? null],
  );
  return rows[0] ? { sessionToken, userId: rows[0].user_id, expires: rows[0].expires } : null;
}

export async function deleteSession(db: Db, sessionToken: string): Promise<void> {
  await db.pool.query(`DELETE FROM sessions WHERE session_token = $1`, [stored(sessionToken)]);
}

/** The signed-in user of a session token, with their GitHub token (server side only). */
export async function userWithToken(
  db: Db,
  sessionToken: string,
  secret: string,
): Promise<{ user: StoredUser; token: string | null } | null> {
  return userWhere(db, `FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.session_token = $1 AND s.expires > now()`, [stored(sessionToken)], secret);
}

/** The user the rows of `from` (which names users `u`) lead to, with their GitHub token unsealed. */
export async function userWhere(db: Db, from: string, values: unknown[], secret: string): Promise<{ user: StoredUser; token: string | null } | null> {
  const { rows } = await db.pool.query<UserRow & { token: string | null }>(`SELECT u.id, u.login, u.name, u.avatar_url, u.token ${from}`, values);
  const row = rows[0];
  if (!row) return null;
  return { user: toUser(row), token: openToken(row.token, secret) };
}
