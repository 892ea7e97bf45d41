import { afterAll, expect, it } from "vitest";
import { beginAttempt } from "../support/attempts";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";

const db = testDb(12);
afterAll(() => db.close());

it("8 concurrent submitters, 200 Events on 5 Items: never two open Runs of one Loop on one Item, one Run per Event, no budget exceeded", async () => {
  const repo = uniqueRepo("race");
  const maxCycles = 3;
  // 200 Events: 5 Items × 40 observations drawn from 12 contents each (so repeats happen);
  // some Runs start while others are submitted, to exercise queueing and supersede.
  const events = Array.from({ length: 200 }, (_, i) => itemEvent(repo, (i % 5) + 1, `c${(i * 7) % 12}`, { maxCycles }));
  let next = 0;
  const submitter = async (w: number) => {
    while (next < events.length) {
      const event = events[next++]!;
      const result = await recordAndClaim(db, event);
      if (result.tag === "Claimed" && result.opened && (next + w) % 4 === 0) {
        await beginAttempt(db, result.runId, { token: `t${next}`, workerId: `w${w}` }).catch(() => undefined);
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => submitter(w)));

  const open = await db.pool.query(
    `SELECT loop, item_key, count(*)::int AS n FROM runs WHERE repo = $1 AND state IN ('Pending','Waiting','Queued','Running')
      GROUP BY loop, item_key HAVING count(*) > 1`,
    [repo],
  );
  expect(open.rows).toEqual([]);
  const perEvent = await db.pool.query(`SELECT event_id FROM runs WHERE repo = $1 GROUP BY event_id HAVING count(*) > 1`, [repo]);
  expect(perEvent.rows).toEqual([]);
  const reserved = await db.pool.query(
    `SELECT item_key, count(*)::int AS n FROM runs WHERE repo = $1 AND reserved_generation = 0 GROUP BY item_key`,
    [repo],
  );
  for (const row of reserved.rows) expect(row.n).toBeLessThanOrEqual(maxCycles);
  const ledger = await db.pool.query(`SELECT count(*)::int AS n FROM events WHERE repo = $1`, [repo]);
  expect(ledger.rows[0].n).toBe(new Set(events.map((e) => e.id)).size);
});
