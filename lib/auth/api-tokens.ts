import { createHash, randomBytes } from "node:crypto";
import { ForbiddenError, NotFoundError, UnauthorizedError } from "../errors";
import { audit } from "../store/audit";
import type { Db } from "../store/db";
import { transaction } from "../store/transaction";
import { userWhere, type StoredUser } from "./session-store";

/**
 * Personal API tokens: a person's bearer credential for the JSON API (`Authorization: Bearer
 * atl_…`), for scripts and CI. A token acts as its person, with the same per-repository checks
 * as their session (their GitHub token asks GitHub), within its scope: `read` answers GET only,
 * `act` the operator actions too. It is shown once; only its SHA-256 is stored. It expires, and
 * its person can revoke it. Creating and revoking are audited.
 */

export const TOKEN_SCOPES = ["read", "act"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
export const MAX_TOKEN_DAYS = 365;

const PREFIX = "atl_";
const TOKEN_SHAPE = /^atl_([a-f0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface ApiTokenInfo {
  id: string;
  name: string;
  scope: TokenScope;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const hashOf = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Creates a token for the user; the token itself is in the answer and nowhere else. */
export async function createApiToken(db: Db, user: Pick<StoredUser, "id" | "login">, input: { name: string; scope: TokenScope; expiresInDays: number }): Promise<ApiTokenInfo & { token: string }> {
  const id = randomBytes(6).toString("hex");
  const token = `${PREFIX}${id}_${randomBytes(32).toString("base64url")}`;
  const row = await transaction(db, async (sql) => {
    const { rows } = await sql.query<TokenRow>(
      `INSERT INTO api_tokens (id, user_id, name, scope, token_hash, expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(days => $6))
       RETURNING ${COLUMNS}`,
      [id, user.id, input.name, input.scope, hashOf(token), input.expiresInDays],
    );
    await audit(sql, { actor: user.login, action: "create_api_token", detail: { id, name: input.name, scope: input.scope, expiresAt: rows[0]!.expires_at } });
    return rows[0]!;
  });
  return { ...info(row), token };
}

/** The user's tokens, newest first, without any secret. */
export async function listApiTokens(db: Db, userId: string): Promise<ApiTokenInfo[]> {
  const { rows } = await db.pool.query<TokenRow>(`SELECT ${COLUMNS} FROM api_tokens WHERE user_id = $1 ORDER BY created_at DESC, id`, [userId]);
  return rows.map(info);
}

/** Revokes one of the user's tokens (another person's is a 404, as one that does not exist). */
export async function revokeApiToken(db: Db, user: Pick<StoredUser, "id" | "login">, id: string): Promise<ApiTokenInfo> {
  return transaction(db, async (sql) => {
    const { rows } = await sql.query<TokenRow>(
      `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
      [id, user.id],
    );
    if (!rows[0]) throw new NotFoundError("api_token_not_found", `You have no API token ${id}.`);
    await audit(sql, { actor: user.login, action: "revoke_api_token", detail: { id } });
    return info(rows[0]);
  });
}

/** The bearer token of an Authorization header, or null when the header is not `Bearer …`. */
export function bearerOf(header: string | null | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1]! : null;
}

/**
 * The person and scope of a bearer token; a token that is malformed, unknown, revoked or
 * expired is a 401 (never a fall-back to a cookie).
 */
export async function userOfApiToken(db: Db, token: string, secret: string): Promise<{ user: StoredUser; githubToken: string | null; scope: TokenScope }> {
  const refused = new UnauthorizedError("invalid_api_token", "The API token is not valid: it is unknown, revoked or expired. Create a new one on the Tokens page.");
  if (!TOKEN_SHAPE.test(token)) throw refused;
  const hash = hashOf(token);
  const found = await userWhere(db, `FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now()`, [hash], secret);
  if (!found) throw refused;
  const { rows } = await db.pool.query<{ scope: TokenScope }>(`UPDATE api_tokens SET last_used_at = now() WHERE token_hash = $1 RETURNING scope`, [hash]);
  return { user: found.user, githubToken: found.token, scope: rows[0]!.scope };
}

/** A read token asks only; an operator action needs an act token. */
export function requireTokenScope(scope: TokenScope | null, method: string): void {
  if (scope === "read" && !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase())) {
    throw new ForbiddenError("token_scope_insufficient", "This API token has the read scope: it cannot act. Create a token with the act scope.");
  }
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

const COLUMNS = "id, name, scope, created_at, expires_at, last_used_at, revoked_at";

const info = (r: TokenRow): ApiTokenInfo => ({
  id: r.id,
  name: r.name,
  scope: r.scope,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});
