import { audit } from "./audit-log";
import type { Db } from "../kernel/db";
import { first, raw, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";
import { toUserWithSealedToken, USER_COLUMNS, type UserRow, type UserWithSealedToken } from "./users";

/**
 * Personal API tokens (`api_tokens`, lib/auth/api-tokens.ts): only a token's SHA-256 is stored.
 * Creating and revoking one write their audit row in the same transaction. A token is live while
 * it is not revoked and its `expires_at`, by Postgres's clock, is ahead.
 */

export const TOKEN_SCOPES = ["read", "act"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface ApiTokenInfo {
  id: string;
  name: string;
  scope: TokenScope;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

interface TokenRow {
  id: string;
  name: string;
  scope: TokenScope;
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = raw("id, name, scope, created_at, expires_at, last_used_at, revoked_at");

const info = (r: TokenRow): ApiTokenInfo => ({
  id: r.id,
  name: r.name,
  scope: r.scope,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

/** Stores a new token of `userId` by its hash, expiring `expiresInDays` from now; audited as `actor`'s. */
export async function insertApiToken(
  db: Db,
  token: { id: string; userId: string; name: string; scope: TokenScope; tokenHash: string; expiresInDays: number },
  actor: string,
): Promise<ApiTokenInfo> {
  return transaction(db, async (client) => {
    const row = (await first<TokenRow>(
      client,
      sql`INSERT INTO api_tokens (id, user_id, name, scope, token_hash, expires_at)
          VALUES (${token.id}, ${token.userId}, ${token.name}, ${token.scope}, ${token.tokenHash}, now() + make_interval(days => ${token.expiresInDays}))
          RETURNING ${COLUMNS}`,
    ))!;
    await audit(client, { actor, action: "create_api_token", detail: { id: token.id, name: token.name, scope: token.scope, expiresAt: row.expires_at } });
    return info(row);
  });
}

/** The user's tokens, newest first, without any secret. */
export async function listApiTokens(db: Db, userId: string): Promise<ApiTokenInfo[]> {
  const tokens = await db.prisma.apiToken.findMany({
    where: { userId },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    select: { id: true, name: true, scope: true, createdAt: true, expiresAt: true, lastUsedAt: true, revokedAt: true },
  });
  return tokens.map((t) => ({ ...t, scope: t.scope as TokenScope }));
}

/** Revokes the user's token `id` (a second revoke keeps the first time); audited. Null when the user has no such token. */
export async function revokeApiTokenOfUser(db: Db, userId: string, id: string, actor: string): Promise<ApiTokenInfo | null> {
  return transaction(db, async (client) => {
    const row = await first<TokenRow>(
      client,
      sql`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = ${id} AND user_id = ${userId} RETURNING ${COLUMNS}`,
    );
    if (!row) return null;
    await audit(client, { actor, action: "revoke_api_token", detail: { id } });
    return info(row);
  });
}

/** The user of a live (unrevoked, unexpired) token, by its hash, with their GitHub token as stored (sealed). */
export async function liveApiTokenUser(db: Db, tokenHash: string): Promise<UserWithSealedToken | null> {
  const row = await first<UserRow & { token: string | null }>(
    db.pool,
    sql`SELECT ${USER_COLUMNS}, u.token FROM api_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_hash = ${tokenHash} AND t.revoked_at IS NULL AND t.expires_at > now()`,
  );
  return row ? toUserWithSealedToken(row) : null;
}

/** Notes that the token was used now; its scope. */
export async function markApiTokenUsed(db: Db, tokenHash: string): Promise<TokenScope> {
  const row = await first<{ scope: TokenScope }>(db.pool, sql`UPDATE api_tokens SET last_used_at = now() WHERE token_hash = ${tokenHash} RETURNING scope`);
  return row!.scope;
}
