import { runIdParam } from "../../../../../lib/http/url-ids";
import { getRun } from "../../../../../lib/dashboard/queries";
import { api } from "../../../../_server/api";

export const dynamic = "force-dynamic";

export const GET = api<{ id: string }>(async ({ params, viewer, ctx }) => getRun(ctx, viewer, runIdParam(params.id)));
