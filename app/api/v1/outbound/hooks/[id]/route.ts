import { hookUpdate, idParam } from "../../../../../../lib/outbound/hooks";
import { deleteHookFor, getHookFor, updateHookFor } from "../../../../../../lib/outbound/manage-hooks";
import { api, body } from "../../../../../_server/api";

export const dynamic = "force-dynamic";

type Params = { id: string };

export const GET = api<Params>(async ({ params, viewer, ctx }) => getHookFor(ctx.db, viewer, idParam(params.id, "webhook")));

/** PATCH: a new URL (checked again), a new secret, `rotate_secret: true` (the new secret is in the answer, once), or the notices (`events`). */
export const PATCH = api<Params>(async ({ request, params, viewer, ctx }) =>
  updateHookFor(ctx.db, viewer, idParam(params.id, "webhook"), await body(request, hookUpdate)),
);

export const DELETE = api<Params>(async ({ params, viewer, ctx }) => deleteHookFor(ctx.db, viewer, idParam(params.id, "webhook")));
