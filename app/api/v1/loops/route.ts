import { getLoops } from "../../../../lib/dashboard/queries";
import { repoQuery } from "../../../../lib/dashboard/schemas";
import { api, query } from "../../../_server/api";

export const dynamic = "force-dynamic";

export const GET = api(async ({ request, viewer, ctx }) => getLoops(ctx, viewer, query(request, repoQuery)));
