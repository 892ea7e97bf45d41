import { BadInputError } from "../../../../../lib/errors";
import { tokenIdParam } from "../../../../../lib/dashboard/schemas";
import { revokeToken } from "../../../../../lib/dashboard/token-actions";
import { api } from "../../../../_server/api";

export const DELETE = api<{ id: string }>(async ({ params, viewer, ctx, scope }) => {
  const id = tokenIdParam.safeParse(params.id);
  if (!id.success) throw new BadInputError("invalid_id", "A token id is 12 hexadecimal characters.");
  return revokeToken(ctx, viewer, scope, id.data);
});
