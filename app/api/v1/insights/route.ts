import { getInsights } from "../../../../lib/dashboard/insights";
import { insightsQuery } from "../../../../lib/dashboard/schemas";
import { api, query } from "../../../_server/api";

export const dynamic = "force-dynamic";

/** GET /api/v1/insights?repo=&loop=&agent=&from=YYYY-MM-DD&to=YYYY-MM-DD — outcomes, times and costs of the visible Runs (docs/insights.md). */
export const GET = api(async ({ request, viewer, ctx }) => getInsights(ctx, viewer, query(request, insightsQuery)));
