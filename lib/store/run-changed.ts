import type pg from "pg";

/**
 * Every change of a Run's state (or of its pull request) is announced on this Postgres
 * channel with the Run id. Inside a transaction the ids are collected and, once it committed
 * (never for a rolled-back change), handed to a per-pool announcer that sends the ids of all
 * transactions of the last few milliseconds in one statement, off the writer's path. A NOTIFY
 * inside the writing transaction would hold Postgres's global notify lock through the
 * commit's fsync and serialize every writer. The mirror (check runs, Item comments) and the
 * dashboard's live views listen; their periodic sweeps cover an announcement lost between a
 * commit and its notify (a crash, a lost connection).
 */
export const RUN_CHANGED_CHANNEL = "atelier_run_changed";

type Queryable = Pick<pg.PoolClient, "query">;

const collecting = new WeakMap<object, Set<string>>();

/** Starts collecting the Run changes of the transaction open on `client`. */
export function collectRunChanges(client: Queryable): void {
  collecting.set(client, new Set());
}

/** Drops what a rolled-back transaction collected. */
export function discardRunChanges(client: Queryable): void {
  collecting.delete(client);
}

/** Hands what a committed transaction collected to the pool's announcer. */
export function flushRunChanges(client: Queryable, pool: Queryable): void {
  const ids = collecting.get(client);
  collecting.delete(client);
  if (ids?.size) announcer(pool).add(ids);
}

/** How long the announcer gathers ids before one NOTIFY statement sends them. */
const ANNOUNCE_EVERY_MS = 10;

const announcers = new WeakMap<object, { add(ids: Iterable<string>): void }>();

function announcer(pool: Queryable): { add(ids: Iterable<string>): void } {
  let found = announcers.get(pool);
  if (!found) {
    let pending = new Set<string>();
    let timer: NodeJS.Timeout | null = null;
    const send = () => {
      timer = null;
      const ids = [...pending];
      pending = new Set();
      notifyRunsChanged(pool, ids).catch(() => {
        /* the pool closed or the database is away: the listeners' sweeps catch up */
      });
    };
    found = {
      add(ids) {
        for (const id of ids) pending.add(id);
        timer ??= setTimeout(send, ANNOUNCE_EVERY_MS);
      },
    };
    announcers.set(pool, found);
  }
  return found;
}

/** Marks Runs changed: announced after the surrounding transaction commits, or now outside one. */
export async function markRunsChanged(sql: Queryable, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  const pending = collecting.get(sql);
  if (pending) for (const id of ids) pending.add(id);
  else await notifyRunsChanged(sql, ids);
}

async function notifyRunsChanged(sql: Queryable, ids: readonly string[]): Promise<void> {
  await sql.query(`SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, [RUN_CHANGED_CHANNEL, ids]);
}
