import { hookInput } from "../../../../../lib/outbound/hooks";
import { createHookFor, listHooksFor } from "../../../../../lib/outbound/manage-hooks";
import { api, body } from "../../../../_server/api";

export const dynamic = "force-dynamic";

/** GET: the webhooks the viewer manages. POST: subscribe a URL for an installation or a Loop; the secret is in the answer, once. */
export const GET = api(async ({ viewer, ctx }) => listHooksFor(ctx.db, viewer));

export const POST = api(async ({ request, viewer, ctx }) => {
  const made = await createHookFor(ctx.db, viewer, await body(request, hookInput));
  return Response.json(made, { status: 201, headers: { "cache-control": "no-store" } });
});
