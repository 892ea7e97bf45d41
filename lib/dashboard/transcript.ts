import { isClosed } from "../engine/run-predicates";
import type { RunStateName } from "../engine/run-state";
import { NotFoundError } from "../errors";
import type { Db } from "../store/kernel/db";
import { notificationsOf, type Notifications } from "../store/kernel/notifications";
import { RUN_CHANGED_CHANNEL } from "../store/runs/run-changed";
import { TRANSCRIPT_CHANNEL, transcriptEntriesAfter, transcriptRunProgress } from "../store/runs/transcript-lines";
import { pullRequestUrl } from "./links";

/**
 * The live transcript of a Run, as server-sent events. Writers of transcript rows notify the
 * Postgres channel `atelier_transcript` with the Run id (and every Run change notifies
 * `atelier_run_changed`); the process's one LISTEN connection (lib/store/kernel/notifications.ts)
 * wakes the streams of that Run.
 * Until a transcript notification has been seen — or while the listener is down — each stream
 * polls every 250 ms instead, so a writer that does not notify is still followed closely.
 */

export { TRANSCRIPT_CHANNEL };
const FAST_POLL_MS = 250;
const SLOW_POLL_MS = 2_000;
const HEARTBEAT_MS = 15_000;
const BATCH = 500;

export interface TranscriptEntryView {
  id: string;
  attemptId: string;
  stream: string;
  text: string;
  at: string;
}

/** Entries after `afterId`, in id order (numbers: 10 after 9). */
export async function readTranscript(db: Db, runId: string, afterId: string, limit = BATCH): Promise<TranscriptEntryView[]> {
  const rows = await transcriptEntriesAfter(db, runId, afterId, limit);
  return rows.map((r) => ({ id: r.id, attemptId: r.attempt_id, stream: r.stream, text: r.text, at: r.at.toISOString() }));
}

/** The default size of a JSON page of a transcript. */
export const TRANSCRIPT_PAGE = 200;

export interface TranscriptPage {
  entries: TranscriptEntryView[];
  /** The `after` of the next page; null when this page holds the last entry stored so far. */
  next: string | null;
}

/**
 * One page of a Run's transcript, by id: the entries after `after` (ids are numbers, and
 * ordered as such), at most `limit`, and the cursor of the next page.
 */
export async function readTranscriptPage(db: Db, runId: string, opts: { after?: string; limit?: number } = {}): Promise<TranscriptPage> {
  const limit = opts.limit ?? TRANSCRIPT_PAGE;
  const rows = await readTranscript(db, runId, opts.after ?? "0", limit + 1);
  const entries = rows.slice(0, limit);
  return { entries, next: rows.length > limit ? entries.at(-1)!.id : null };
}

export interface RunProgress {
  state: RunStateName;
  pullRequestNumber: number | null;
  pullRequestUrl: string | null;
  updatedAt: string;
}

export async function runProgress(db: Db, runId: string): Promise<RunProgress> {
  const r = await transcriptRunProgress(db, runId);
  if (!r) throw new NotFoundError("run_not_found", `There is no Run ${runId}.`);
  return {
    state: r.state,
    pullRequestNumber: r.pull_request_number,
    pullRequestUrl: r.pull_request_number ? pullRequestUrl(r.repo, r.pull_request_number) : null,
    updatedAt: r.updated_at.toISOString(),
  };
}

/**
 * Whether a transcript writer was seen notifying, per process's notifications: until then (and
 * while the connection is down) streams poll fast, since a writer may not notify.
 */
const transcriptNotifies = new WeakSet<Notifications>();

/** How long a stream may sleep before it looks again by itself. */
function pollMs(notifications: Notifications): number {
  return notifications.listening && transcriptNotifies.has(notifications) ? SLOW_POLL_MS : FAST_POLL_MS;
}

/** Wakes `wake` at each new transcript row and each change of the Run `runId`. */
function subscribeRun(notifications: Notifications, runId: string, wake: () => void): () => void {
  const subscriptions = [
    notifications.subscribe(TRANSCRIPT_CHANNEL, (payload) => {
      transcriptNotifies.add(notifications);
      if (payload === runId) wake();
    }),
    notifications.subscribe(RUN_CHANGED_CHANNEL, (payload) => {
      if (payload === runId) wake();
    }),
  ];
  return () => {
    for (const s of subscriptions) s.close();
  };
}

const encoder = new TextEncoder();

/** A live stream asks again, this often, whether its viewer may still read the Run. */
export const REAUTHORIZE_MS = 5 * 60_000;

function sse(event: string, data: unknown, id?: string): Uint8Array {
  return encoder.encode(`${id ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * The SSE body: `entry` events (id = transcript row id, so a reconnect resumes from
 * Last-Event-ID), `run` events when the state or the pull request changes, and `end` once the
 * Run is closed and its transcript fully sent.
 */
export function streamTranscript(
  db: Db,
  runId: string,
  opts: {
    after?: string;
    signal?: AbortSignal;
    /** asks again whether the viewer may read the Run; a refusal ends the stream with a `failure` event */
    reauthorize?: () => Promise<void>;
    /** how often (default every 5 minutes): a revoked reader stops receiving within that */
    reauthorizeEveryMs?: number;
  } = {},
): ReadableStream<Uint8Array> {
  const notifications = notificationsOf(db);
  let after = opts.after && /^\d+$/.test(opts.after) ? opts.after : "0";
  let stopped = false;
  let unsubscribe: (() => void) | null = null;
  let sleeper: { timer: NodeJS.Timeout; resolve: () => void } | null = null;

  const wake = () => {
    if (sleeper) {
      clearTimeout(sleeper.timer);
      const s = sleeper;
      sleeper = null;
      s.resolve();
    }
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      sleeper = { timer: setTimeout(() => { sleeper = null; resolve(); }, ms), resolve };
    });
  const stop = () => {
    stopped = true;
    unsubscribe?.();
    unsubscribe = null;
    wake();
  };

  return new ReadableStream<Uint8Array>({
    async start(controller) {
      opts.signal?.addEventListener("abort", stop, { once: true });
      unsubscribe = subscribeRun(notifications, runId, wake);
      controller.enqueue(encoder.encode(`retry: 2000\n\n`));
      let lastRun = "";
      let lastBeat = Date.now();
      let closedPasses = 0;
      let authorizedAt = Date.now();
      try {
        while (!stopped) {
          if (opts.reauthorize && Date.now() - authorizedAt >= (opts.reauthorizeEveryMs ?? REAUTHORIZE_MS)) {
            await opts.reauthorize();
            authorizedAt = Date.now();
          }
          const entries = await readTranscript(db, runId, after);
          for (const e of entries) controller.enqueue(sse("entry", e, e.id));
          if (entries.length) after = entries.at(-1)!.id;
          if (entries.length === BATCH) continue;

          const progress = await runProgress(db, runId);
          const key = `${progress.state}|${progress.pullRequestNumber ?? ""}`;
          if (key !== lastRun) {
            controller.enqueue(sse("run", progress));
            lastRun = key;
          }
          // a closed Run: one more pass for rows committed just before the state, then end
          if (isClosed(progress.state) && !entries.length && ++closedPasses >= 2) {
            controller.enqueue(sse("end", { state: progress.state }));
            break;
          }
          if (Date.now() - lastBeat > HEARTBEAT_MS) {
            controller.enqueue(encoder.encode(`: keep-alive\n\n`));
            lastBeat = Date.now();
          }
          await sleep(isClosed(progress.state) ? FAST_POLL_MS : pollMs(notifications));
        }
      } catch (err) {
        if (!stopped) {
          const e = err as { token?: string; message?: string };
          controller.enqueue(sse("failure", { error: e.token ?? "internal", message: e.token ? e.message : "The transcript stream failed." }));
        }
      } finally {
        stop();
        try {
          controller.close();
        } catch {
          /* already closed by the client */
        }
      }
    },
    cancel() {
      stop();
    },
  });
}
