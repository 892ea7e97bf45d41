import { createApiToken, listApiTokens, revokeApiToken, type TokenScope } from "../auth/api-tokens";
import { requireViewer } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import { ForbiddenError } from "../errors";
import type { DashboardContext } from "./services";

/**
 * A person's API tokens, managed from their session only: a token never mints, lists or
 * revokes tokens (a leaked one cannot make itself a successor).
 */
function sessionViewer(viewer: Viewer | null, scope: TokenScope | null): Viewer {
  const who = requireViewer(viewer);
  if (scope !== null) throw new ForbiddenError("session_required", "API tokens are managed from a signed-in session on the dashboard, not with a token.");
  return who;
}

export async function createToken(ctx: DashboardContext, viewer: Viewer | null, scope: TokenScope | null, input: { name: string; scope: TokenScope; expiresInDays: number }) {
  const who = sessionViewer(viewer, scope);
  return { status: 201, body: { ok: true as const, token: await createApiToken(ctx.db, who, input) } };
}

export async function listTokens(ctx: DashboardContext, viewer: Viewer | null, scope: TokenScope | null) {
  const who = sessionViewer(viewer, scope);
  return { tokens: await listApiTokens(ctx.db, who.id) };
}

export async function revokeToken(ctx: DashboardContext, viewer: Viewer | null, scope: TokenScope | null, id: string) {
  const who = sessionViewer(viewer, scope);
  return { ok: true as const, token: await revokeApiToken(ctx.db, who, id) };
}
