import { RUN_STATE_SQL } from "../../engine/run-predicates";
import { countRunTransition } from "../../metrics/metrics";
import { TRANSITIONS } from "../../engine/run-state";
import { hasOutboundHooks, recordTerminalDeliveries } from "../outbound/terminal-deliveries";
import type { Db } from "../kernel/db";
import { loopItemLock } from "../kernel/locks";
import { isRequestSql } from "./event-intent";
import { markRunsChanged } from "./run-changed";
import { literal, query, raw, rows, sql, type Queryable, type Statement } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

/**
 * The Item no longer matches the Loop's `if:`: its unstarted Runs end Canceled (Revoked),
 * giving their reservations back, and its queued reads of the Item are marked ignored. Running
 * Attempts are never touched, nor a person's request (an operator's dispatch, a comment's ask:
 * ADR 0073), started or not, queued or not.
 */
export async function revoke(db: Db, loop: string, itemKey: string): Promise<string[]> {
  return transaction(
    db,
    async (tx) => {
      const revoked = await rows<{ id: string; hooked: boolean }>(
        tx,
        sql`UPDATE runs SET state = ${literal(TRANSITIONS.revoke.to)}, cancel_reason = 'Revoked', reserved_generation = NULL, ended_at = now(),
                updated_at = now(), waiting_reason = NULL
          WHERE loop = ${loop} AND item_key = ${itemKey} AND state::text = ANY(${TRANSITIONS.revoke.from})
            AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = runs.event_id AND ${raw(isRequestSql("e.submission"))})
          RETURNING id, ${raw(hasOutboundHooks("runs"))} AS hooked`,
      );
      countRunTransition("Canceled", revoked.length);
      await markRunsChanged(tx, revoked.map((r) => r.id));
      // outbound webhooks: run.canceled (Revoked), where a hook listens
      for (const r of revoked) if (r.hooked) await recordTerminalDeliveries(tx, r.id);
      await ignoreQueuedEvents(tx, loop, itemKey, "revoked", QUEUED_READS);
      return revoked.map((r) => r.id);
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
    sql`SELECT DISTINCT loop, item_key AS "itemKey" FROM runs WHERE repo = ${repo.toLowerCase()} AND ${raw(RUN_STATE_SQL.isOpen("runs.state"))}`,
  );
}

/** SQL: a queued Event that is a read of the Item, not a person's request (which the Loop's `if:` does not withdraw). */
export const QUEUED_READS = raw(`NOT ${isRequestSql("events.submission")}`);

/** Marks the queued Events of a Loop on an Item that also meet `which` (a condition on `events`) as ignored. */
export async function ignoreQueuedEvents(on: Queryable, loop: string, itemKey: string, reason: "revoked" | "old_generation", which: Statement): Promise<void> {
  await query(on, ignoreQueuedSql({ loop: sql`${loop}`, itemKey: sql`${itemKey}` }, reason, which));
}

/**
 * SQL (a data-modifying statement, for a CTE as well): marks the queued Events of a Loop on an
 * Item (`loop`, `itemKey`: values, or columns of `from`, a FROM item) that also meet `which` (a
 * condition on `events`) as ignored for `reason` (a token of the code's, written into the text). They are found through
 * events_loop_item_key_status_idx.
 */
export const ignoreQueuedSql = (of: { loop: Statement; itemKey: Statement; from?: Statement }, reason: string, which: Statement): Statement => sql`
UPDATE events SET status = 'Ignored', reason = ${literal(reason)}, ignored_at = now()${of.from ? sql` FROM ${of.from}` : raw("")}
 WHERE events.loop = ${of.loop} AND events.item_key = ${of.itemKey} AND events.status = 'Queued' AND ${which}`;
