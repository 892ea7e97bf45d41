import type pg from "pg";

/**
 * Every change of a Run's state (or of its pull request) is announced on this Postgres
 * channel with the Run id. Inside a transaction the ids are collected and sent right after
 * COMMIT (never for a rolled-back change): a NOTIFY inside the writing transaction would hold
 * Postgres's global notify lock through the commit's fsync and serialize every writer. The
 * mirror (check runs, Item comments) and the dashboard's live views listen; their periodic
 * sweeps cover an announcement lost between a commit and its notify.
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

/** Sends what a committed transaction collected. */
export async function flushRunChanges(client: Queryable): Promise<void> {
  const ids = collecting.get(client);
  collecting.delete(client);
  if (ids?.size) await notifyRunsChanged(client, [...ids]);
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
