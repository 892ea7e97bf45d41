import { getInstallations } from "../../../../lib/dashboard/queries";
import { api } from "../../../_server/api";

export const dynamic = "force-dynamic";

export const GET = api(async ({ viewer, ctx }) => getInstallations(ctx, viewer));
