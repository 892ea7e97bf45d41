import { createHash, randomBytes } from "node:crypto";
import { ForbiddenError, NotFoundError, UnauthorizedError } from "../errors";
import { insertApiToken, liveApiTokenUser, markApiTokenUsed, revokeApiTokenOfUser, type ApiTokenInfo, type TokenScope } from "../store/people/api-token-rows";
import type { Db } from "../store/kernel/db";
import type { StoredUser } from "../store/people/users";
import { openToken } from "../secrets/token-box";

/**
 * Personal API tokens: a person's bearer credential for the JSON API (`Authorization: Bearer
 * atl_…`), for scripts and CI. A token acts as its person, with the same per-repository checks
 * as their session (their GitHub token asks GitHub), within its scope: `read` answers GET only,
 * `act` the operator actions too. It is shown once; only its SHA-256 is stored. It expires, and
 * its person can revoke it. Creating and revoking are audited.
 */

export { listApiTokens, TOKEN_SCOPES, type ApiTokenInfo, type TokenScope } from "../store/people/api-token-rows";
export const MAX_TOKEN_DAYS = 365;

const PREFIX = "atl_";
const TOKEN_SHAPE = /^atl_([a-f0-9]{12})_([A-Za-z0-9_-]{43})$/;

const hashOf = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Creates a token for the user; the token itself is in the answer and nowhere else. */
export async function createApiToken(db: Db, user: Pick<StoredUser, "id" | "login">, input: { name: string; scope: TokenScope; expiresInDays: number }): Promise<ApiTokenInfo & { token: string }> {
  const id = randomBytes(6).toString("hex");
  const token = `${PREFIX}${id}_${randomBytes(32).toString("base64url")}`;
  const stored = await insertApiToken(db, { id, userId: user.id, name: input.name, scope: input.scope, tokenHash: hashOf(token), expiresInDays: input.expiresInDays }, user.login);
  return { ...stored, token };
}

/** Revokes one of the user's tokens (another person's is a 404, as one that does not exist). */
export async function revokeApiToken(db: Db, user: Pick<StoredUser, "id" | "login">, id: string): Promise<ApiTokenInfo> {
  const revoked = await revokeApiTokenOfUser(db, user.id, id, user.login);
  if (!revoked) throw new NotFoundError("api_token_not_found", `You have no API token ${id}.`);
  return revoked;
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
  const found = await liveApiTokenUser(db, hash);
  if (!found) throw refused;
  const scope = await markApiTokenUsed(db, hash);
  return { user: found.user, githubToken: openToken(found.sealedToken, secret), scope };
}

/** A read token asks only; an operator action needs an act token. */
export function requireTokenScope(scope: TokenScope | null, method: string): void {
  if (scope === "read" && !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase())) {
    throw new ForbiddenError("token_scope_insufficient", "This API token has the read scope: it cannot act. Create a token with the act scope.");
  }
}
