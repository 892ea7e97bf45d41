import type { Db } from "../store/kernel/db";
import { ITEM_CHANGED_CHANNEL } from "../store/items/item-changed";
import { notificationsOf } from "../store/kernel/notifications";
import { RUN_CHANGED_CHANNEL } from "../store/runs/run-changed";

/**
 * The dashboard's live views (Board, Needs you) as server-sent events: a `changed` event soon
 * after any Run changes (its state, its pull request — every `atelier_run_changed`
 * notification) or any Item's content does (a label, a close, an edit, a merge — every
 * `atelier_item_changed` one, whether or not a Loop matched), a burst coalesced into one. The event carries no id and no data of a Run:
 * the page reads its own data again with the viewer's rights, so the stream tells a viewer
 * nothing but that something moved. While the process's LISTEN connection
 * (lib/store/kernel/notifications.ts) is down the stream says `changed` every few seconds instead,
 * so a page is never left stale for long.
 */
const COALESCE_MS = 150;
const HEARTBEAT_MS = 15_000;
const UNLISTENED_POLL_MS = 5_000;

const encoder = new TextEncoder();

export function streamChanges(db: Db, opts: { signal?: AbortSignal } = {}): ReadableStream<Uint8Array> {
  const notifications = notificationsOf(db);
  let unsubscribe: (() => void) | null = null;
  const timers = new Set<NodeJS.Timeout>();
  let pending = false;

  const stop = () => {
    unsubscribe?.();
    unsubscribe = null;
    for (const t of timers) clearInterval(t);
    timers.clear();
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
      const changed = () => {
        if (pending) return;
        pending = true;
        const t = setTimeout(() => {
          timers.delete(t);
          pending = false;
          send(`event: changed\ndata: {}\n\n`);
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
      const subscriptions = [RUN_CHANGED_CHANNEL, ITEM_CHANGED_CHANNEL].map((channel) => notifications.subscribe(channel, changed));
      unsubscribe = () => {
        for (const s of subscriptions) s.close();
      };
      send(`retry: 2000\n\n`);
      timers.add(setInterval(() => send(`: keep-alive\n\n`), HEARTBEAT_MS));
      timers.add(setInterval(() => {
        if (!notifications.listening) changed();
      }, UNLISTENED_POLL_MS));
    },
    cancel() {
      stop();
    },
  });
}
