import { RUN_STATE_SQL } from "../../engine/run-predicates";
import type { Db } from "../kernel/db";
import { first, raw, rows, sql } from "../kernel/sql";

/**
 * What the worker's reconcile reads to put Runs back in motion: Postgres is the truth, the
 * queue is rebuilt from it (lib/runner/reconcile.ts).
 */

/** Every Run a worker moves (Pending, Queued, Running), oldest first: the queue's order. */
export function activeRunsToMove(db: Db): Promise<{ id: string; received_at: Date }[]> {
  return rows<{ id: string; received_at: Date }>(
    db.pool,
    sql`SELECT id, received_at FROM runs WHERE ${raw(RUN_STATE_SQL.needsWorker("runs.state"))} ORDER BY received_at, id`,
  );
}

/**
 * The (Loop, Item) pairs with a queued Event and no Run that is open or closed within the last
 * `graceMs` (a Run that closed so recently may still be continuing on its worker).
 */
export function strandedQueues(db: Db, graceMs: number): Promise<{ loop: string; item_key: string }[]> {
  return rows<{ loop: string; item_key: string }>(
    db.pool,
    sql`SELECT DISTINCT e.loop, e.item_key FROM events e
         WHERE e.status = 'Queued'
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.loop = e.loop AND r.item_key = e.item_key
                             AND (${raw(RUN_STATE_SQL.isOpen("r.state"))} OR r.ended_at > now() - make_interval(secs => ${graceMs}::float8 / 1000)))`,
  );
}

/** When a Run's Event was received (its place in the queue); undefined when there is no such Run. */
export async function runReceivedAt(db: Db, runId: string): Promise<Date | undefined> {
  return (await first<{ received_at: Date }>(db.pool, sql`SELECT received_at FROM runs WHERE id = ${runId}`))?.received_at;
}
