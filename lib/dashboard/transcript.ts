import pg from "pg";
import { isClosed } from "../engine/run-predicates";
import type { RunStateName } from "../engine/run-state";
import { NotFoundError } from "../errors";
import { TRANSCRIPT_CHANNEL } from "../store/transcript-lines";
import { ITEM_CHANGED_CHANNEL } from "../store/item-changed";
import { RUN_CHANGED_CHANNEL } from "../store/run-changed";
import type { Db } from "../store/db";
import { pullRequestUrl } from "./links";

/**
 * The live transcript of a Run, as server-sent events. Writers of transcript rows notify the
 * Postgres channel `atelier_transcript` with the Run id (and every Run change notifies
 * `atelier_run_changed`); one LISTEN connection per process wakes the streams of that Run.
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

/** Entries after `afterId`, in id order: the table's bigint, not the text the rows carry it as (10 after 9). */
export async function readTranscript(db: Db, runId: string, afterId: string, limit = BATCH): Promise<TranscriptEntryView[]> {
  const { rows } = await db.pool.query<{ id: string; attempt_id: string; stream: string; text: string; at: Date }>(
    `SELECT id::text AS id, attempt_id, stream, text, at FROM transcript_entries
      WHERE run_id = $1 AND id > $2::bigint ORDER BY transcript_entries.id LIMIT $3`,
    [runId, afterId, limit],
  );
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
  const { rows } = await db.pool.query<{ repo: string; state: RunStateName; pull_request_number: number | null; updated_at: Date }>(
    `SELECT repo, state::text AS state, pull_request_number, updated_at FROM runs WHERE id = $1`,
    [runId],
  );
  const r = rows[0];
  if (!r) throw new NotFoundError("run_not_found", `There is no Run ${runId}.`);
  return {
    state: r.state,
    pullRequestNumber: r.pull_request_number,
    pullRequestUrl: r.pull_request_number ? pullRequestUrl(r.repo, r.pull_request_number) : null,
    updatedAt: r.updated_at.toISOString(),
  };
}

type Wake = () => void;

/** One LISTEN connection per process, waking the streams of the Run a notification names. */
export class TranscriptWatcher {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private readonly subscribers = new Map<string, Set<Wake>>();
  /** Woken by every Run change and every Item change, whichever (the dashboard's live views). */
  private readonly everyChange = new Set<Wake>();
  private retryTimer: NodeJS.Timeout | null = null;
  /** True while the LISTEN connection is up. */
  listening = false;
  /** True once a transcript writer was seen notifying: streams may then poll slowly. */
  transcriptNotifies = false;

  constructor(private readonly url: string) {}

  subscribe(runId: string, wake: Wake): () => void {
    let set = this.subscribers.get(runId);
    if (!set) this.subscribers.set(runId, (set = new Set()));
    set.add(wake);
    void this.ensureConnected();
    return () => {
      set.delete(wake);
      if (!set.size) this.subscribers.delete(runId);
      this.disconnectWhenIdle();
    };
  }

  /** Wakes `wake` at every Run change (`atelier_run_changed`) and Item change (`atelier_item_changed`). */
  subscribeEveryChange(wake: Wake): () => void {
    this.everyChange.add(wake);
    void this.ensureConnected();
    return () => {
      this.everyChange.delete(wake);
      this.disconnectWhenIdle();
    };
  }

  private hasSubscribers(): boolean {
    return this.subscribers.size > 0 || this.everyChange.size > 0;
  }

  private disconnectWhenIdle(): void {
    if (!this.hasSubscribers()) void this.disconnect();
  }

  /** How long a stream may sleep before it looks again by itself. */
  pollMs(): number {
    return this.listening && this.transcriptNotifies ? SLOW_POLL_MS : FAST_POLL_MS;
  }

  private ensureConnected(): Promise<void> {
    if (this.client || this.connecting) return this.connecting ?? Promise.resolve();
    const client = new pg.Client({ connectionString: this.url });
    this.connecting = (async () => {
      try {
        client.on("notification", (msg) => {
          if (msg.channel === TRANSCRIPT_CHANNEL) this.transcriptNotifies = true;
          if (msg.payload) for (const wake of this.subscribers.get(msg.payload) ?? []) wake();
          if (msg.channel === RUN_CHANGED_CHANNEL || msg.channel === ITEM_CHANGED_CHANNEL) for (const wake of this.everyChange) wake();
        });
        client.on("error", () => this.lost(client));
        client.on("end", () => this.lost(client));
        await client.connect();
        await client.query(`LISTEN ${TRANSCRIPT_CHANNEL}; LISTEN ${RUN_CHANGED_CHANNEL}; LISTEN ${ITEM_CHANGED_CHANNEL}`);
        this.client = client;
        this.listening = true;
      } catch {
        this.lost(client);
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  private lost(client: pg.Client): void {
    if (this.client && this.client !== client) return;
    this.client = null;
    this.listening = false;
    client.end().catch(() => undefined);
    if (this.hasSubscribers() && !this.retryTimer) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (this.hasSubscribers()) void this.ensureConnected();
      }, 1_000);
      this.retryTimer.unref();
    }
  }

  async disconnect(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.listening = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (client) await client.end().catch(() => undefined);
  }
}

let sharedWatcher: TranscriptWatcher | undefined;

export function transcriptWatcher(db: Db): TranscriptWatcher {
  sharedWatcher ??= new TranscriptWatcher((db.pool as unknown as { options: { connectionString: string } }).options.connectionString);
  return sharedWatcher;
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
    watcher?: TranscriptWatcher;
    /** asks again whether the viewer may read the Run; a refusal ends the stream with a `failure` event */
    reauthorize?: () => Promise<void>;
    /** how often (default every 5 minutes): a revoked reader stops receiving within that */
    reauthorizeEveryMs?: number;
  } = {},
): ReadableStream<Uint8Array> {
  const watcher = opts.watcher ?? transcriptWatcher(db);
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
      unsubscribe = watcher.subscribe(runId, wake);
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
          await sleep(isClosed(progress.state) ? FAST_POLL_MS : watcher.pollMs());
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
