import { idParam } from "../../../../../../../lib/outbound/hooks";
import { testDeliveryFor } from "../../../../../../../lib/outbound/manage-hooks";
import { publicUrl } from "../../../../../../../lib/setup/public-url";
import { api } from "../../../../../../_server/api";

export const dynamic = "force-dynamic";

/** POST: send a test notice to the target now; the answer says how the try went, the delivery log keeps it. */
export const POST = api<{ id: string }>(async ({ params, viewer, ctx }) => testDeliveryFor(ctx.db, viewer, idParam(params.id, "webhook"), publicUrl()));
