import { moveCard } from "../../../../../lib/dashboard/actions";
import { moveCardBody } from "../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../_server/api";

export const POST = api(async ({ request, viewer, ctx }) => moveCard(ctx, viewer, await body(request, moveCardBody)));
