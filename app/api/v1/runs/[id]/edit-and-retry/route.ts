import { runIdParam } from "../../../../../../lib/http/url-ids";
import { editAndRetryRun } from "../../../../../../lib/dashboard/actions";
import { editAndRetryBody } from "../../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../../_server/api";

export const POST = api<{ id: string }>(async ({ request, params, viewer, ctx }) =>
  editAndRetryRun(ctx, viewer, runIdParam(params.id), await body(request, editAndRetryBody)),
);
