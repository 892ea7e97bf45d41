import { setLoopPaused } from "../../../../../lib/dashboard/actions";
import { pauseLoopBody } from "../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../_server/api";

export const POST = api(async ({ request, viewer, ctx }) => setLoopPaused(ctx, viewer, await body(request, pauseLoopBody)));
