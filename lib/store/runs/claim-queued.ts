import { decideOpening, isOlderThanItem } from "../../engine/claim-decision";
import { OPEN } from "../../engine/run-state";
import type { Db } from "../kernel/db";
import { loopItemLock } from "../kernel/locks";
import { openOrBlock, type Admission, type ClaimResult, type EventInput } from "./claim";
import { ignoreQueuedEvents } from "./revoke";
import { firstPrepared, rows, sql } from "../kernel/sql";
import { transaction, type Sql } from "../kernel/transaction";

/**
 * The Event queued behind a Loop's Run on an Item whose turn is next: the first received (asked
 * after every Attempt: prepared). Every Event that queued superseded the queued ones it replaces
 * (claim.ts supersedeQueuedSql), so the queue holds at most one read of the Item — the newest —
 * and each person's request, each in the order it came (ADR 0073).
 */
export async function nextQueuedEvent(db: Db, loop: string, itemKey: string): Promise<EventInput | null> {
  // the columns under EventInput's names, so the row is the Event as the claim takes it
  const event = await firstPrepared<EventInput>(
    db.pool,
    "atelier-next-queued-event",
    sql`SELECT id, kind, loop, repo, item_key AS "itemKey", number, content_hash AS "contentHash", generation, submission FROM events
         WHERE loop = ${loop} AND item_key = ${itemKey} AND status = 'Queued' ORDER BY received_at, id LIMIT 1`,
  );
  return event ?? null;
}

interface QueuedSnapshot {
  queued: boolean;
  open: boolean;
  generation: number;
  ask: boolean;
  reserved: number;
}

/** What the claim of a queued Event reads, under the (Loop, Item) lock. */
const readQueuedSnapshot = async (tx: Sql, event: EventInput): Promise<QueuedSnapshot> =>
  (await firstPrepared<QueuedSnapshot>(
    tx,
    "atelier-claim-queued-snapshot",
    sql`WITH budget AS (SELECT generation, ask IS NOT NULL AS ask FROM cycle_budgets WHERE item_key = ${event.itemKey})
        SELECT EXISTS (SELECT 1 FROM events WHERE id = ${event.id} AND status = 'Queued') AS queued,
               EXISTS (SELECT 1 FROM runs WHERE loop = ${event.loop} AND item_key = ${event.itemKey} AND state::text = ANY(${OPEN})) AS open,
               COALESCE((SELECT generation FROM budget), 0) AS generation,
               COALESCE((SELECT ask FROM budget), false) AS ask,
               (SELECT count(*)::int FROM runs WHERE loop = ${event.loop} AND item_key = ${event.itemKey}
                  AND reserved_generation = COALESCE((SELECT generation FROM budget), 0)) AS reserved`,
  ))!;

/** How many times the open Run is looked for when each one found closed meanwhile. */
const OPEN_RUN_TRIES = 3;

/**
 * After a Run closes, opens a Run for the next Event queued behind it (the caller checked that
 * the Item still matches, when the Event is a read of it); the queued Events it replaces are
 * marked ignored (by openOrBlock's write, as for any Event that opens its Run or is blocked in
 * its stead). An Event of an older generation than the Item's is ignored alone: the requests
 * queued after it keep their turn. Null when nothing is queued any more, or another Run is
 * open: that Run is marked so its last outcome hands over to the queued Events in turn.
 */
export function claimQueued(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult | null> {
  return transaction(
    db,
    async (tx) => {
      for (let tries = 1; ; tries++) {
        const snap = await readQueuedSnapshot(tx, event);
        if (!snap.queued) return null;
        if (snap.open) {
          // a Run that closed between the read and the mark is read again (each statement sees the latest commits)
          if ((await markQueuedBehind(tx, event.loop, event.itemKey)) || tries === OPEN_RUN_TRIES) return null;
          continue;
        }
        const facts = { event: { kind: event.kind, generation: event.generation, maxCycles: event.submission.maxCycles }, ...snap };
        if (isOlderThanItem(facts)) {
          await ignoreQueuedEvents(tx, event.loop, event.itemKey, "old_generation", sql`generation < ${snap.generation}`);
          return { tag: "Ignored", reason: "old_generation" };
        }
        const result = await openOrBlock(tx, event, decideOpening({ ...facts, supersede: null }), admission);
        // requests still queued behind the Event (ADR 0073): the Run that opened hands over to them
        if (result.tag === "Claimed" && result.opened) await markQueuedBehind(tx, event.loop, event.itemKey, true);
        return result;
      }
    },
    { lockKey: loopItemLock(event.loop, event.itemKey) },
  );
}

/**
 * Marks the open Run of a Loop on an Item as having Events queued behind it (`ifQueued`: only
 * when some Event is still queued); false when none is open (or none is queued).
 */
async function markQueuedBehind(tx: Sql, loop: string, itemKey: string, ifQueued = false): Promise<boolean> {
  const marked = await rows(
    tx,
    sql`UPDATE runs SET queued_behind = true WHERE loop = ${loop} AND item_key = ${itemKey} AND state::text = ANY(${OPEN})
         AND (NOT ${ifQueued}::boolean OR EXISTS (SELECT 1 FROM events WHERE loop = ${loop} AND item_key = ${itemKey} AND status = 'Queued'))
     RETURNING id`,
  );
  return marked.length > 0;
}
