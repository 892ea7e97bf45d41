import { requireViewer } from "../../../../lib/auth/authorize";
import { streamChanges } from "../../../../lib/dashboard/live-changes";
import { api, eventStream } from "../../../_server/api";
import { streamSignal } from "../../../_server/stopping";

export const dynamic = "force-dynamic";

/** Server-sent `changed` events for the live views of a signed-in viewer (lib/dashboard/live-changes.ts). */
export const GET = api(async ({ request, viewer, ctx }) => {
  requireViewer(viewer);
  return eventStream(streamChanges(ctx.db, { signal: streamSignal(request) }));
});
