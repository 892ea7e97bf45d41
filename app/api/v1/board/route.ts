import { getBoard } from "../../../../lib/dashboard/queries";
import { boardQuery } from "../../../../lib/dashboard/schemas";
import { api, query } from "../../../_server/api";

export const dynamic = "force-dynamic";

export const GET = api(async ({ request, viewer, ctx }) => getBoard(ctx, viewer, query(request, boardQuery)));
