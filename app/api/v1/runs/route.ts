import { getRuns } from "../../../../lib/dashboard/queries";
import { runsQuery } from "../../../../lib/dashboard/schemas";
import { api, query } from "../../../_server/api";

export const dynamic = "force-dynamic";

export const GET = api(async ({ request, viewer, ctx }) => getRuns(ctx, viewer, query(request, runsQuery)));
