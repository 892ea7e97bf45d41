import pg from "pg";
import type { Db } from "../store/db";
import { RUN_CHANGED_CHANNEL } from "../store/run-changed";

export interface RunChangedListener {
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Called after a lost connection is back: notifications sent meanwhile are gone, so sweep. */
  onReconnect?: () => void;
  /** Delay before reconnecting (default 1 s). */
  retryMs?: number;
  onError?: (err: Error) => void;
}

/**
 * Listens to `atelier_run_changed` on a connection of its own and hands each Run id to
 * `onRunId`. A lost connection is reopened; the first connect must work (it fails fast).
 */
export async function listenRunChanged(db: Db, onRunId: (runId: string) => void, opts: ListenOptions = {}): Promise<RunChangedListener> {
  let closed = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;

  const open = async (): Promise<void> => {
    const c = new pg.Client({ ...db.pool.options });
    c.on("notification", (n) => {
      if (n.channel === RUN_CHANGED_CHANNEL && n.payload) onRunId(n.payload);
    });
    c.on("error", (err) => {
      opts.onError?.(err);
      lost(c);
    });
    c.on("end", () => lost(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${RUN_CHANGED_CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    client = c;
  };

  const lost = (c: pg.Client): void => {
    if (closed || client !== c) return;
    client = null;
    c.end().catch(() => undefined);
    const retry = (): void => {
      timer = setTimeout(() => {
        timer = null;
        if (closed) return;
        open().then(
          () => opts.onReconnect?.(),
          (err: Error) => {
            opts.onError?.(err);
            retry();
          },
        );
      }, opts.retryMs ?? 1_000);
    };
    retry();
  };

  await open();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
