import { resetCycleBudget } from "../../../../../lib/dashboard/actions";
import { resetBudgetBody } from "../../../../../lib/dashboard/schemas";
import { api, body } from "../../../../_server/api";

export const POST = api(async ({ request, viewer, ctx }) => resetCycleBudget(ctx, viewer, await body(request, resetBudgetBody)));
