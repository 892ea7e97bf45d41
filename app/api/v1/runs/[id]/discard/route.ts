import { runIdParam } from "../../../../../../lib/http/url-ids";
import { discardReviewed } from "../../../../../../lib/dashboard/actions";
import { emptyBody } from "../../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../../_server/api";

export const POST = api<{ id: string }>(async ({ request, params, viewer, ctx }) => {
  await body(request, emptyBody);
  return discardReviewed(ctx, viewer, runIdParam(params.id));
});
