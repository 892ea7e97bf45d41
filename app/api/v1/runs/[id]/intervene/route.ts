import { runIdParam } from "../../../../../../lib/http/url-ids";
import { intervene } from "../../../../../../lib/dashboard/actions";
import { interveneBody } from "../../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../../_server/api";

export const POST = api<{ id: string }>(async ({ request, params, viewer, ctx }) =>
  intervene(ctx, viewer, runIdParam(params.id), await body(request, interveneBody)),
);
