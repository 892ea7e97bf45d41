import { runIdParam } from "../../../../../../lib/http/ids";
import { authorizeTranscript } from "../../../../../../lib/dashboard/queries";
import { transcriptQuery } from "../../../../../../lib/dashboard/schemas";
import { streamTranscript } from "../../../../../../lib/dashboard/transcript";
import { api, query } from "../../../../../_server/api";

export const dynamic = "force-dynamic";

/**
 * The Run's transcript as server-sent events, from `?after=<entry id>` or the Last-Event-ID
 * of a reconnect: `entry`, `run` (state and pull request) and `end` events. The viewer is
 * authorized again every few minutes (REAUTHORIZE_MS); a refusal ends the stream.
 */
export const GET = api<{ id: string }>(async ({ request, params, viewer, ctx }) => {
  const id = runIdParam(params.id);
  const { after } = query(request, transcriptQuery);
  await authorizeTranscript(ctx, viewer, id);
  const resume = request.headers.get("last-event-id");
  const stream = streamTranscript(ctx.db, id, {
    after: resume && /^\d{1,18}$/.test(resume) ? resume : after,
    signal: request.signal,
    // a reader whose access GitHub revoked stops receiving within REAUTHORIZE_MS
    reauthorize: () => authorizeTranscript(ctx, viewer, id),
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
});
