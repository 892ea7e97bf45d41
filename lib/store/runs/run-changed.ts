import type pg from "pg";
import { announce, notify } from "../kernel/announce";

/**
 * Every change of a Run's state (or of its pull request) is announced on this Postgres
 * channel with the Run id. Inside a transaction the ids are collected and, once it committed
 * (never for a rolled-back change), handed to a per-pool announcer that sends the ids of all
 * transactions of the last few milliseconds in one statement, off the writer's path (see
 * announce.ts). The mirror (check runs, Item comments) and the dashboard's live views listen;
 * their periodic sweeps cover an announcement lost between a commit and its notify (a crash,
 * a lost connection).
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
  if (ids?.size) announce(pool, RUN_CHANGED_CHANNEL, ids);
}

/** Marks Runs changed: announced after the surrounding transaction commits, or now outside one. */
export async function markRunsChanged(sql: Queryable, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  const pending = collecting.get(sql);
  if (pending) for (const id of ids) pending.add(id);
  else await notify(sql, RUN_CHANGED_CHANNEL, ids);
}

/** Announces Runs changed by a statement that committed on its own (outside a transaction). */
export function announceRunsChanged(pool: Queryable, ids: Iterable<string>): void {
  announce(pool, RUN_CHANGED_CHANNEL, ids);
}
