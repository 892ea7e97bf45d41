import { narrow, scopeRepos } from "../../../../lib/auth/viewer-scope";
import { usageForViewer, usageQuery } from "../../../../lib/metering/usage-for-viewer";
import { api, query } from "../../../_server/api";

export const dynamic = "force-dynamic";

/** GET /api/v1/usage?month=YYYY-MM&repo=owner/name — usage per day, repository, Loop and agent, and each limit. */
export const GET = api(async ({ request, viewer, ctx }) => usageForViewer(ctx.db, viewer, { scopeRepos, narrow }, query(request, usageQuery)));
