import { runIdParam } from "../../../../../../lib/http/url-ids";
import { authorizeTranscript } from "../../../../../../lib/dashboard/queries";
import { transcriptQuery } from "../../../../../../lib/dashboard/schemas";
import { readTranscriptPage, streamTranscript } from "../../../../../../lib/dashboard/transcript";
import { api, eventStream, query } from "../../../../../_server/api";
import { streamSignal } from "../../../../../_server/stopping";

export const dynamic = "force-dynamic";

/** Whether the request asks for a JSON page rather than the live stream. */
function wantsPage(request: Request, limit: number | undefined): boolean {
  if (limit !== undefined) return true;
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("application/json") && !accept.includes("text/event-stream");
}

/**
 * The Run's transcript. With `?limit=` (or `Accept: application/json`): one JSON page,
 * `{ entries, next }`, of the entries after `?after=<entry id>` in id order (numbers), `next`
 * the `after` of the following page (null at the end so far). Otherwise server-sent events,
 * from `?after=` or the Last-Event-ID of a reconnect: `entry`, `run` (state and pull request)
 * and `end` events; the viewer is authorized again every few minutes (REAUTHORIZE_MS), and a
 * refusal ends the stream.
 */
export const GET = api<{ id: string }>(async ({ request, params, viewer, ctx }) => {
  const id = runIdParam(params.id);
  const { after, limit } = query(request, transcriptQuery);
  await authorizeTranscript(ctx, viewer, id);
  if (wantsPage(request, limit)) return readTranscriptPage(ctx.db, id, { after, limit });
  const resume = request.headers.get("last-event-id");
  const stream = streamTranscript(ctx.db, id, {
    after: resume && /^\d{1,18}$/.test(resume) ? resume : after,
    signal: streamSignal(request),
    // a reader whose access GitHub revoked stops receiving within REAUTHORIZE_MS
    reauthorize: () => authorizeTranscript(ctx, viewer, id),
  });
  return eventStream(stream);
});
