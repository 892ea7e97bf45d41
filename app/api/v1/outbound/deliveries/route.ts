import { deliveriesQuery } from "../../../../../lib/outbound/delivery-log";
import { listDeliveriesFor } from "../../../../../lib/outbound/manage-hooks";
import { api, query } from "../../../../_server/api";

export const dynamic = "force-dynamic";

/** GET /api/v1/outbound/deliveries?hook=&run=&limit= — the delivery log, newest first. */
export const GET = api(async ({ request, viewer, ctx }) => {
  const q = query(request, deliveriesQuery);
  return listDeliveriesFor(ctx.db, viewer, { hookId: q.hook, runId: q.run, limit: q.limit });
});
