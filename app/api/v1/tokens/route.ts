import { createTokenBody } from "../../../../lib/dashboard/schemas";
import { createToken, listTokens } from "../../../../lib/dashboard/token-actions";
import { api, body } from "../../../_server/api";

export const GET = api(async ({ viewer, ctx, scope }) => listTokens(ctx, viewer, scope));

export const POST = api(async ({ request, viewer, ctx, scope }) => {
  const { status, body: answer } = await createToken(ctx, viewer, scope, await body(request, createTokenBody));
  return Response.json(answer, { status, headers: { "cache-control": "no-store" } });
});
