import pg from "pg";
import type { Db } from "./db";

/**
 * The process's Postgres notifications: one LISTEN connection (apart from the pool: a pooled
 * connection would be handed to others) that listens to the channels someone subscribed to and
 * hands each notification to that channel's subscribers. It opens at the first subscription,
 * closes when the last one leaves, and while anyone subscribes a lost connection is opened
 * again every `retryMs`. Notifications sent while it was down are gone: `listening` says
 * whether it is up (a live view polls meanwhile), and `onReconnect` tells a subscriber it is
 * back (a worker sweeps). Senders: lib/store/kernel/announce.ts.
 */
export interface Notifications {
  /** Hands every payload of `channel` to `onPayload` until the returned subscription is closed. */
  subscribe(channel: string, onPayload: (payload: string) => void, options?: SubscribeOptions): Subscription;
  /** True while the connection is up and listening. */
  readonly listening: boolean;
  /** Ends every subscription and the connection. */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Called when the connection is back after a loss: what was sent meanwhile is gone. */
  onReconnect?: () => void;
  /** Told of a lost connection and of a failed try to open it again. */
  onError?: (err: Error) => void;
}

export interface Subscription {
  /** Settles once the channel is listened to: what is sent from then on reaches `onPayload`. */
  ready: Promise<void>;
  close(): void;
}

export interface NotificationsOptions {
  /** Delay before opening a lost connection again (default 1 s). */
  retryMs?: number;
}

/** A channel name, written into LISTEN as an identifier (they are constants of lib/store). */
const CHANNEL = /^[a-z_][a-z0-9_]*$/;

interface Subscriber {
  channel: string;
  onPayload: (payload: string) => void;
  options: SubscribeOptions;
  /** Set once its channel was first listened to; from then on a new connection is a reconnect for it. */
  heard: boolean;
  settle: () => void;
}

export function createNotifications(connection: pg.ClientConfig, options: NotificationsOptions = {}): Notifications {
  const subscribers = new Set<Subscriber>();
  /** The connection, once it listens; `listened` are the channels it listens to. */
  let client: pg.Client | null = null;
  let listened = new Set<string>();
  let opening: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  /** LISTEN and UNLISTEN go one after the other on the connection. */
  let syncing: Promise<void> = Promise.resolve();

  const wanted = (): Set<string> => new Set([...subscribers].map((s) => s.channel));
  const tellError = (err: Error): void => {
    for (const s of subscribers) s.options.onError?.(err);
  };

  /** Settles the subscribers whose channel is now listened to; on a new connection (`opened`), tells the ones that had heard before. */
  const settle = (opened: boolean): void => {
    for (const s of [...subscribers]) {
      if (!listened.has(s.channel)) continue;
      if (!s.heard) {
        s.heard = true;
        s.settle();
      } else if (opened) s.options.onReconnect?.();
    }
  };

  const open = (): void => {
    if (client || opening || !subscribers.size) return;
    const c = new pg.Client(connection);
    opening = c;
    c.on("notification", (n) => {
      if ((c !== client && c !== opening) || n.payload === undefined) return;
      for (const s of [...subscribers]) if (s.channel === n.channel) s.onPayload(n.payload);
    });
    c.on("error", (err) => {
      tellError(err);
      lost(c);
    });
    c.on("end", () => lost(c));
    const channels = wanted();
    void (async () => {
      try {
        await c.connect();
        if (channels.size) await c.query([...channels].map((ch) => `LISTEN ${ch}`).join("; "));
      } catch (err) {
        tellError(err as Error);
        lost(c);
        return;
      }
      if (opening !== c) return;
      opening = null;
      client = c;
      listened = channels;
      settle(true);
      sync();
    })();
  };

  /** Brings the connection's channels in line with the subscriptions; closes it when nobody is left. */
  const sync = (): void => {
    syncing = syncing.then(async () => {
      const c = client;
      if (!c) return;
      if (!subscribers.size) {
        disconnect();
        return;
      }
      const want = wanted();
      const add = [...want].filter((ch) => !listened.has(ch));
      const drop = [...listened].filter((ch) => !want.has(ch));
      if (!add.length && !drop.length) {
        settle(false);
        return;
      }
      try {
        await c.query([...add.map((ch) => `LISTEN ${ch}`), ...drop.map((ch) => `UNLISTEN ${ch}`)].join("; "));
      } catch {
        return; // the connection is lost: its "error" or "end" opens another, with every channel
      }
      if (c !== client) return;
      listened = new Set([...[...listened].filter((ch) => want.has(ch)), ...add]);
      settle(false);
    });
  };

  const lost = (c: pg.Client): void => {
    if (c === opening) opening = null;
    else if (c === client) {
      client = null;
      listened = new Set();
    } else return;
    c.end().catch(() => undefined);
    if (subscribers.size && !retry) {
      retry = setTimeout(() => {
        retry = null;
        open();
      }, options.retryMs ?? 1_000);
      retry.unref();
    }
  };

  const disconnect = (): Promise<void> => {
    if (retry) clearTimeout(retry);
    retry = null;
    const c = client ?? opening;
    client = null;
    opening = null;
    listened = new Set();
    return c ? c.end().catch(() => undefined) : Promise.resolve();
  };

  return {
    subscribe(channel, onPayload, subscribeOptions = {}) {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${JSON.stringify(channel)}`);
      let settleReady!: () => void;
      const ready = new Promise<void>((resolve) => (settleReady = resolve));
      const subscriber: Subscriber = { channel, onPayload, options: subscribeOptions, heard: false, settle: settleReady };
      subscribers.add(subscriber);
      if (client) sync();
      else open();
      return {
        ready,
        close() {
          if (subscribers.delete(subscriber)) sync();
          if (!subscribers.size) void disconnect();
        },
      };
    },
    get listening() {
      return client !== null;
    },
    async close() {
      subscribers.clear();
      await disconnect();
    },
  };
}

const perDb = new WeakMap<Db, Notifications>();

/** The notifications of `db`'s database: one connection for every subscriber of the process. */
export function notificationsOf(db: Db): Notifications {
  let notifications = perDb.get(db);
  if (!notifications) perDb.set(db, (notifications = createNotifications({ ...db.pool.options })));
  return notifications;
}
