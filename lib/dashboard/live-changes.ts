import { scopeRepos } from "../auth/viewer-scope";
import type { Viewer } from "../auth/viewer";
import { repoOfItemKey } from "../engine/ids";
import { RateLimitError } from "../errors";
import type { Db } from "../store/kernel/db";
import { reposOfRuns } from "../store/reads/run-detail-read";
import { ITEM_CHANGED_CHANNEL } from "../store/items/item-changed";
import { notificationsOf } from "../store/kernel/notifications";
import { RUN_CHANGED_CHANNEL } from "../store/runs/run-changed";

/**
 * The dashboard's live views (Board, Needs you) as server-sent events: a `changed` event soon
 * after any Run changes (its state, its pull request — every `atelier_run_changed`
 * notification) or any Item's content does (a label, a close, an edit, a merge — every
 * `atelier_item_changed` one, whether or not a Loop matched), a burst coalesced into one — and
 * only when the burst touches a repository the viewer sees (`concerns`). The event carries no id and no data of a Run:
 * the page reads its own data again with the viewer's rights, so the stream tells a viewer
 * nothing but that something moved. While the process's LISTEN connection
 * (lib/store/kernel/notifications.ts) is down the stream says `changed` every few seconds instead,
 * so a page is never left stale for long.
 */
const COALESCE_MS = 150;
const HEARTBEAT_MS = 15_000;
const UNLISTENED_POLL_MS = 5_000;
/** How often a stream asks again whether its person may still hear it (a session ended, a token revoked, allowed_orgs). */
export const REAUTHORIZE_MS = 60_000;
/** Open streams one person may hold on one web process (a tab holds one). */
export const MAX_STREAMS_PER_PERSON = 8;

const encoder = new TextEncoder();
const openStreams = new Map<string, number>();

/** Takes one of the person's stream slots, or throws 429 `too_many_streams`; the returned function gives it back (once). */
function takeStreamSlot(person: string): () => void {
  const held = openStreams.get(person) ?? 0;
  if (held >= MAX_STREAMS_PER_PERSON) {
    throw new RateLimitError("too_many_streams", `You have ${held} live views open on this server, the most one person may: close one (a tab) and try again.`, 5);
  }
  openStreams.set(person, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (openStreams.get(person) ?? 1) - 1;
    if (left > 0) openStreams.set(person, left);
    else openStreams.delete(person);
  };
}

export interface StreamOptions {
  signal?: AbortSignal;
  /** the person the stream is for: at most MAX_STREAMS_PER_PERSON open at once */
  person?: string;
  /** asked every `reauthorizeMs`: false (or a throw) ends the stream with a `signed_out` event */
  stillAllowed?: () => Promise<boolean>;
  reauthorizeMs?: number;
  /** whether a burst of changes (Run ids, Item keys) touches what the person sees: only then is `changed` sent */
  concerns?: (changed: ChangedIds) => Promise<boolean>;
}

/** The Runs and Items a burst of notifications named. */
export interface ChangedIds {
  runs: string[];
  items: string[];
}

/**
 * Whether a burst concerns the viewer: an Item or a Run of a repository they see (viewer-scope.ts,
 * GitHub's answer cached 30 s). Another tenant's work moving tells them nothing, not even when.
 */
export function concernsViewer(db: Db, viewer: Viewer): (changed: ChangedIds) => Promise<boolean> {
  return async ({ runs, items }) => {
    const seen = new Set(await scopeRepos(db, viewer));
    if (items.some((key) => seen.has(repoOfItemKey(key) ?? ""))) return true;
    return (await reposOfRuns(db, runs)).some((repo) => seen.has(repo));
  };
}

export function streamChanges(db: Db, opts: StreamOptions = {}): ReadableStream<Uint8Array> {
  const release = opts.person === undefined ? () => undefined : takeStreamSlot(opts.person);
  const notifications = notificationsOf(db);
  let unsubscribe: (() => void) | null = null;
  const timers = new Set<NodeJS.Timeout>();
  let pending = false;
  // what the burst named; `unknown`: a change whose ids are not known (the LISTEN connection was down)
  let burst: ChangedIds & { unknown: boolean } = { runs: [], items: [], unknown: false };

  const stop = () => {
    unsubscribe?.();
    unsubscribe = null;
    for (const t of timers) clearInterval(t);
    timers.clear();
    release();
  };

  return new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (chunk: string) => {
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          stop();
        }
      };
      const { concerns } = opts;
      const changed = (kind: "runs" | "items" | "unknown") => (payload?: string) => {
        if (kind === "unknown") burst.unknown = true;
        else if (payload) burst[kind].push(payload);
        if (pending) return;
        pending = true;
        const t = setTimeout(() => {
          timers.delete(t);
          pending = false;
          const heard = burst;
          burst = { runs: [], items: [], unknown: false };
          // a check that fails says `changed`: the event names nothing, and the page reads with its rights
          const told = heard.unknown || !concerns ? Promise.resolve(true) : concerns(heard).catch(() => true);
          void told.then((yes) => {
            if (yes) send(`event: changed\ndata: {}\n\n`);
          });
        }, COALESCE_MS);
        timers.add(t);
      };
      opts.signal?.addEventListener("abort", () => {
        stop();
        try {
          controller.close();
        } catch {
          /* already closed */
        }
      }, { once: true });
      const subscriptions = [notifications.subscribe(RUN_CHANGED_CHANNEL, changed("runs")), notifications.subscribe(ITEM_CHANGED_CHANNEL, changed("items"))];
      unsubscribe = () => {
        for (const s of subscriptions) s.close();
      };
      const { stillAllowed } = opts;
      if (stillAllowed) {
        timers.add(setInterval(() => {
          void stillAllowed()
            .catch(() => false)
            .then((allowed) => {
              if (allowed || unsubscribe === null) return;
              send(`event: signed_out\ndata: {}\n\n`);
              stop();
              try {
                controller.close();
              } catch {
                /* already closed */
              }
            });
        }, opts.reauthorizeMs ?? REAUTHORIZE_MS));
      }
      send(`retry: 2000\n\n`);
      timers.add(setInterval(() => send(`: keep-alive\n\n`), HEARTBEAT_MS));
      timers.add(setInterval(() => {
        if (!notifications.listening) changed("unknown")();
      }, UNLISTENED_POLL_MS));
    },
    cancel() {
      stop();
    },
  });
}
