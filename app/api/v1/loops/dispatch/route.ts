import { dispatchLoop } from "../../../../../lib/dashboard/actions";
import { dispatchBody } from "../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../_server/api";

export const POST = api(async ({ request, viewer, ctx }) => {
  const { status, body: answer } = await dispatchLoop(ctx, viewer, await body(request, dispatchBody));
  return Response.json(answer, { status, headers: { "cache-control": "no-store" } });
});
