import type { Db } from "../kernel/db";
import { Prisma } from "../generated/client";
import { query, raw, rows, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

/**
 * Dashboard users (`users`). A user's id is their GitHub user id, so the GitHub account is the
 * only "account" there is. Their GitHub OAuth token is stored sealed (lib/secrets/token-box.ts):
 * this module is handed the sealed text and hands it back, never the token.
 */

export interface StoredUser {
  /** The GitHub user id, as text. */
  id: string;
  login: string;
  name: string | null;
  avatarUrl: string | null;
}

/** What GitHub says about the person signing in. */
export interface GitHubIdentity {
  githubId: string;
  login: string;
  name: string | null;
  avatarUrl: string | null;
}

/** A user and their GitHub token as stored: sealed, or null when none was stored. */
export interface UserWithSealedToken {
  user: StoredUser;
  sealedToken: string | null;
}

const USER = { id: true, login: true, name: true, avatarUrl: true } as const;

/** A `users` row as the joins of sessions and API tokens read it (`USER_COLUMNS`, on `users u`). */
export interface UserRow {
  id: string;
  login: string;
  name: string | null;
  avatar_url: string | null;
}

export const USER_COLUMNS = raw("u.id, u.login, u.name, u.avatar_url");

export const toUser = (r: UserRow): StoredUser => ({ id: r.id, login: r.login, name: r.name, avatarUrl: r.avatar_url });

/** A user row read with `u.token` beside `USER_COLUMNS`. */
export const toUserWithSealedToken = (r: UserRow & { token: string | null }): UserWithSealedToken => ({ user: toUser(r), sealedToken: r.token });

/**
 * Creates or refreshes the user of a GitHub identity. A login that now belongs to another
 * GitHub account (a rename, then someone took the old name) is released from the stale row.
 */
export async function upsertUser(db: Db, who: GitHubIdentity): Promise<StoredUser> {
  return transaction(db, async (client) => {
    await query(client, sql`DELETE FROM users WHERE lower(login) = lower(${who.login}) AND id <> ${who.githubId}`);
    const [row] = await rows<UserRow>(
      client,
      sql`INSERT INTO users (id, login, name, avatar_url) VALUES (${who.githubId}, ${who.login}, ${who.name}, ${who.avatarUrl})
          ON CONFLICT (id) DO UPDATE SET login = EXCLUDED.login, name = EXCLUDED.name, avatar_url = EXCLUDED.avatar_url
          RETURNING id, login, name, avatar_url`,
    );
    return toUser(row!);
  });
}

export async function getUser(db: Db, id: string): Promise<StoredUser | null> {
  return db.prisma.user.findUnique({ where: { id }, select: USER });
}

/** Changes the fields of `patch` that are given; null when there is no such user. */
export async function updateUserProfile(db: Db, id: string, patch: { name?: string | null; avatarUrl?: string | null }): Promise<StoredUser | null> {
  const data = { ...(patch.name !== undefined ? { name: patch.name } : {}), ...(patch.avatarUrl !== undefined ? { avatarUrl: patch.avatarUrl } : {}) };
  try {
    return await db.prisma.user.update({ where: { id }, data, select: USER });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === RECORD_NOT_FOUND) return null;
    throw err;
  }
}

/** Prisma's code for an update of a row that does not exist. */
const RECORD_NOT_FOUND = "P2025";

/** Stores the user's GitHub token, already sealed (null forgets it). */
export async function storeSealedUserToken(db: Db, userId: string, sealedToken: string | null): Promise<void> {
  await db.prisma.user.updateMany({ where: { id: userId }, data: { token: sealedToken } });
}
