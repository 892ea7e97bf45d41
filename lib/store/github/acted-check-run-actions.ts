import type { Db } from "../kernel/db";
import { query, sql } from "../kernel/sql";

/**
 * The check run actions that acted (`check_run_actions`, lib/mirror/check-run-actions.ts): one
 * row per key (repository, check run, action, identifier, sender), so a key acts once.
 */

/** Claims `key` for the delivery acting on `runId`: false when it was claimed already (a replay). */
export async function claimCheckRunAction(db: Db, key: string, runId: string, deliveryId: string | null): Promise<boolean> {
  const { rowCount } = await query(
    db.pool,
    sql`INSERT INTO check_run_actions (key, run_id, delivery_id) VALUES (${key}, ${runId}, ${deliveryId}) ON CONFLICT (key) DO NOTHING`,
  );
  return rowCount === 1;
}

/** Gives a claimed key back (the action was refused, so a later delivery may act). */
export async function releaseCheckRunAction(db: Db, key: string): Promise<void> {
  await query(db.pool, sql`DELETE FROM check_run_actions WHERE key = ${key}`);
}
