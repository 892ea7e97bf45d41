import { requireViewer } from "../../../../lib/auth/authorize";
import { viewerFromApiRequest } from "../../../../lib/auth/current-viewer";
import { concernsViewer, streamChanges } from "../../../../lib/dashboard/live-changes";
import { api, eventStream } from "../../../_server/api";
import { streamSignal } from "../../../_server/stopping";

export const dynamic = "force-dynamic";

/**
 * Server-sent `changed` events for the live views of a signed-in viewer (lib/dashboard/live-changes.ts):
 * a few per person, each asked again every minute whether its session or token still holds.
 */
export const GET = api(async ({ request, viewer, ctx }) => {
  const who = requireViewer(viewer);
  const stillAllowed = async () => (await viewerFromApiRequest(ctx.db, request.headers)).viewer?.id === who.id;
  return eventStream(streamChanges(ctx.db, { signal: streamSignal(request), person: who.id, stillAllowed, concerns: concernsViewer(ctx.db, who) }));
});
