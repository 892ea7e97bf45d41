import { getAudit } from "../../../../lib/dashboard/queries";
import { auditQuery } from "../../../../lib/dashboard/schemas";
import { api, query } from "../../../_server/api";

export const dynamic = "force-dynamic";

export const GET = api(async ({ request, viewer, ctx }) => getAudit(ctx, viewer, query(request, auditQuery)));
