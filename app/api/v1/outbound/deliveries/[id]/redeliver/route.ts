import { idParam } from "../../../../../../../lib/outbound/hooks";
import { redeliverFor } from "../../../../../../../lib/outbound/manage-hooks";
import { api } from "../../../../../../_server/api";

export const dynamic = "force-dynamic";

/** POST: send the delivery again now, under the same id; the answer says how this try went. */
export const POST = api<{ id: string }>(async ({ params, viewer, ctx }) => redeliverFor(ctx.db, viewer, idParam(params.id, "delivery")));
