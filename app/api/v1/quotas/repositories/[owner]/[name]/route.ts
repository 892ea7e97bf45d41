import { readQuota, writeQuota } from "../../../../../../../lib/metering/manage-quotas";
import { quotaInput, quotaOwnerOf } from "../../../../../../../lib/metering/quota-settings";
import { api, body } from "../../../../../../_server/api";

export const dynamic = "force-dynamic";

type Params = { owner: string; name: string };

/** A repository's own limits (admins): GET reads them, PUT sets any of them (0 = unlimited). */
export const GET = api<Params>(async ({ params, viewer, ctx }) => readQuota(ctx.db, viewer, quotaOwnerOf(params)));

export const PUT = api<Params>(async ({ request, params, viewer, ctx }) =>
  writeQuota(ctx.db, viewer, quotaOwnerOf(params), await body(request, quotaInput)),
);
