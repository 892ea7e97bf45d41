import { prepared, sql, type Queryable } from "./sql";

/**
 * Postgres notifications sent after the fact and batched: the ids handed in during the last
 * few milliseconds go out in one statement per channel, off the caller's path. A NOTIFY inside
 * a writing transaction would hold Postgres's global notify lock through that commit's WAL
 * flush and serialize every writer of the instance; one NOTIFY per write would cost a round
 * trip each. Listeners treat a notification as a hint and have sweeps for a lost one (a crash
 * between a commit and its announcement, a lost connection).
 */

/** How long ids are gathered before one statement sends them. */
const ANNOUNCE_EVERY_MS = 10;

type Pending = { ids: Set<string>; timer: NodeJS.Timeout };

const pendingByPool = new WeakMap<object, Map<string, Pending>>();

/** Announces `ids` on `channel` (one notification per distinct id) within a few milliseconds. */
export function announce(pool: Queryable, channel: string, ids: Iterable<string>): void {
  let channels = pendingByPool.get(pool);
  if (!channels) pendingByPool.set(pool, (channels = new Map()));
  let pending = channels.get(channel);
  if (!pending) {
    const batch: Pending = {
      ids: new Set(),
      timer: setTimeout(() => {
        channels.delete(channel);
        notify(pool, channel, [...batch.ids]).catch(() => {
          /* the pool closed or the database is away: the listeners' sweeps catch up */
        });
      }, ANNOUNCE_EVERY_MS),
    };
    channels.set(channel, (pending = batch));
  }
  for (const id of ids) pending.ids.add(id);
}

/** Notifies `channel` once per id, now. */
export async function notify(on: Queryable, channel: string, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  await prepared(on, "atelier-notify", sql`SELECT pg_notify(${channel}, id) FROM unnest(${ids}::text[]) AS id`);
}
