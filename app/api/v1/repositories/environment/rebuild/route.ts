import { rebuildEnvironment } from "../../../../../../lib/dashboard/environment-snapshots";
import { rebuildEnvironmentBody } from "../../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../../_server/api";

export const POST = api(async ({ request, viewer, ctx }) => rebuildEnvironment(ctx, viewer, await body(request, rebuildEnvironmentBody)));
