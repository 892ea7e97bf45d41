import { decideOpening, isOlderThanItem } from "../engine/claim";
import { OPEN } from "../engine/run-state";
import type { Db } from "./db";
import { loopItemLock } from "./locks";
import { againIfClaimedMeanwhile, openOrBlock, type Admission, type ClaimResult, type EventInput } from "./record-and-claim";
import { ignoreQueuedEvents } from "./revoke";
import { transaction, type Sql } from "./transaction";

interface QueuedEventRow {
  id: string;
  kind: "item" | "tick";
  loop: string;
  repo: string;
  item_key: string;
  number: number | null;
  content_hash: string | null;
  generation: number;
  submission: EventInput["submission"];
}

const NEWEST_QUEUED = {
  name: "atelier-newest-queued-event",
  text: `SELECT id, kind, loop, repo, item_key, number, content_hash, generation, submission FROM events
          WHERE loop = $1 AND item_key = $2 AND status = 'Queued' ORDER BY received_at DESC, id DESC LIMIT 1`,
};

/** The newest Event queued behind a Loop's Run on an Item, if any (asked after every Attempt: prepared). */
export async function newestQueuedEvent(db: Db, loop: string, itemKey: string): Promise<EventInput | null> {
  const { rows } = await db.pool.query<QueuedEventRow>({ ...NEWEST_QUEUED, values: [loop, itemKey] });
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    kind: row.kind,
    loop: row.loop,
    repo: row.repo,
    itemKey: row.item_key,
    number: row.number,
    contentHash: row.content_hash,
    generation: row.generation,
    submission: row.submission,
  };
}

interface QueuedSnapshot {
  queued: boolean;
  open: boolean;
  generation: number;
  ask: boolean;
  reserved: number;
}

const QUEUED_SNAPSHOT = {
  name: "atelier-claim-queued-snapshot",
  text: `WITH budget AS (SELECT generation, ask IS NOT NULL AS ask FROM cycle_budgets WHERE item_key = $2)
         SELECT EXISTS (SELECT 1 FROM events WHERE id = $3 AND status = 'Queued') AS queued,
                EXISTS (SELECT 1 FROM runs WHERE loop = $1 AND item_key = $2 AND state::text = ANY($4)) AS open,
                COALESCE((SELECT generation FROM budget), 0) AS generation,
                COALESCE((SELECT ask FROM budget), false) AS ask,
                (SELECT count(*)::int FROM runs WHERE loop = $1 AND item_key = $2
                   AND reserved_generation = COALESCE((SELECT generation FROM budget), 0)) AS reserved`,
};

/** How many times the open Run is looked for when each one found closed meanwhile. */
const OPEN_RUN_TRIES = 3;

/**
 * After a Run closes, opens a Run for the newest Event queued behind it (the caller checked
 * that the Item still matches); older queued Events are marked ignored. Null when nothing
 * is queued any more, or another Run is open: that Run is marked so its last outcome hands
 * over to the queued Events in turn.
 */
export async function claimQueued(db: Db, event: EventInput, admission?: Admission): Promise<ClaimResult | null> {
  return againIfClaimedMeanwhile(() => lockedClaimQueued(db, event, admission));
}

function lockedClaimQueued(db: Db, event: EventInput, admission: Admission | undefined): Promise<ClaimResult | null> {
  return transaction(
    db,
    async (sql) => {
      for (let tries = 1; ; tries++) {
        const { rows } = await sql.query<QueuedSnapshot>({ ...QUEUED_SNAPSHOT, values: [event.loop, event.itemKey, event.id, OPEN] });
        const snap = rows[0]!;
        if (!snap.queued) return null;
        if (snap.open) {
          // a Run that closed between the read and the mark is read again (each statement sees the latest commits)
          if ((await markQueuedBehind(sql, event.loop, event.itemKey)) || tries === OPEN_RUN_TRIES) return null;
          continue;
        }
        await ignoreQueuedEvents(sql, event.loop, event.itemKey, "superseded_by_newer", event.id);
        const facts = { event: { kind: event.kind, generation: event.generation, maxCycles: event.submission.maxCycles }, ...snap };
        if (isOlderThanItem(facts)) {
          await ignoreQueuedEvents(sql, event.loop, event.itemKey, "old_generation");
          return { tag: "Ignored", reason: "old_generation" };
        }
        return openOrBlock(sql, event, decideOpening({ ...facts, supersede: null }), admission);
      }
    },
    { lockKey: loopItemLock(event.loop, event.itemKey) },
  );
}

/** Marks the open Run of a Loop on an Item as having Events queued behind it; false when none is open. */
async function markQueuedBehind(sql: Sql, loop: string, itemKey: string): Promise<boolean> {
  const { rows } = await sql.query(
    `UPDATE runs SET queued_behind = true WHERE loop = $1 AND item_key = $2 AND state::text = ANY($3) RETURNING id`,
    [loop, itemKey, OPEN],
  );
  return rows.length > 0;
}
