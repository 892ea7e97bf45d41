import { checkConfig } from "../../../../../lib/dashboard/actions";
import { checkConfigBody } from "../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../_server/api";

export const POST = api(async ({ request, viewer, ctx }) => checkConfig(ctx, viewer, await body(request, checkConfigBody)));
