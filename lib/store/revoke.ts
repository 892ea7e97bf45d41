import { countRunTransition } from "../metrics/metrics";
import { TRANSITIONS } from "../engine/run-state";
import { hasOutboundHooks, recordTerminalDeliveries } from "./terminal-deliveries";
import type { Db } from "./db";
import { loopItemLock } from "./locks";
import { markRunsChanged } from "./run-changed";
import { inPhase } from "./run-phase";
import { raw, rows, sql } from "./sql";
import { transaction } from "./transaction";

/**
 * The Item no longer matches the Loop's `if:`: its unstarted Runs end Canceled (Revoked),
 * giving their reservations back, and its queued Events are marked ignored. Running Attempts
 * are never touched.
 */
export async function revoke(db: Db, loop: string, itemKey: string): Promise<string[]> {
  return transaction(
    db,
    async (sql) => {
      const { rows } = await sql.query<{ id: string; hooked: boolean }>(
        `UPDATE runs SET state = '${TRANSITIONS.revoke.to}', cancel_reason = 'Revoked', reserved_generation = NULL, ended_at = now(),
                updated_at = now(), waiting_reason = NULL
          WHERE loop = $1 AND item_key = $2 AND state::text = ANY($3) RETURNING id, ${hasOutboundHooks("runs")} AS hooked`,
        [loop, itemKey, TRANSITIONS.revoke.from],
      );
      countRunTransition("Canceled", rows.length);
      await markRunsChanged(sql, rows.map((r) => r.id));
      // outbound webhooks: run.canceled (Revoked), where a hook listens
      for (const r of rows) if (r.hooked) await recordTerminalDeliveries(sql, r.id);
      await ignoreQueuedEvents(sql, loop, itemKey, "revoked");
      return rows.map((r) => r.id);
    },
    { lockKey: loopItemLock(loop, itemKey) },
  );
}

/**
 * The (Loop, Item) pairs of a repository with an open Run (whose queued Events a revoke would
 * also drop): a revoke of any other pair changes nothing.
 */
export async function loopItemsWithOpenRuns(db: Db, repo: string): Promise<{ loop: string; itemKey: string }[]> {
  return rows<{ loop: string; itemKey: string }>(
    db.pool,
    sql`SELECT DISTINCT loop, item_key AS "itemKey" FROM runs WHERE repo = ${repo.toLowerCase()} AND ${raw(inPhase("runs", "Active", "Waiting"))}`,
  );
}

/** Marks the queued Events of a Loop on an Item as ignored. */
export async function ignoreQueuedEvents(
  sql: { query: Db["pool"]["query"] },
  loop: string,
  itemKey: string,
  reason: string,
  exceptId: string | null = null,
): Promise<void> {
  await sql.query(
    `UPDATE events SET status = 'Ignored', reason = $3, ignored_at = now()
      WHERE loop = $1 AND item_key = $2 AND status = 'Queued' AND ($4::text IS NULL OR id <> $4)`,
    [loop, itemKey, reason, exceptId],
  );
}
