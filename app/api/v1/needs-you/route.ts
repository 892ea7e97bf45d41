import { getNeedsYou } from "../../../../lib/dashboard/queries";
import { repoQuery } from "../../../../lib/dashboard/schemas";
import { api, query } from "../../../_server/api";

export const dynamic = "force-dynamic";

export const GET = api(async ({ request, viewer, ctx }) => getNeedsYou(ctx, viewer, query(request, repoQuery)));
