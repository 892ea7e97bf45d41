import { afterAll, expect, it } from "vitest";
import { seedItem } from "../dashboard/support/seed";
import { testDb, uniqueRepo } from "../support/db";

const db = testDb();
afterAll(() => db.close());

const OPEN = ["Pending", "Waiting", "Queued", "Running"];
const CLOSED = ["Succeeded", "Failed", "Canceled"];
const LOOPS = ["a", "b", "c"];

/** A small deterministic generator (mulberry32), so a failing walk can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What the Item keeps, and its current Run by definition (the open one first, then the newest received_at, then the id). */
async function keptAndDefined(key: string) {
  const { rows } = await db.pool.query(
    `SELECT (SELECT json_build_object('id', current_run_id, 'open', current_run_open, 'pr', current_run_pull_request) FROM items WHERE key = $1) AS kept,
            (SELECT json_build_object('id', id, 'open', state IN ('Pending', 'Waiting', 'Queued', 'Running'), 'pr', pull_request_number) FROM runs WHERE item_key = $1
              ORDER BY state IN ('Pending', 'Waiting', 'Queued', 'Running') DESC, received_at DESC, id DESC LIMIT 1) AS defined`,
    [key],
  );
  return { kept: rows[0].kept, defined: rows[0].defined ?? { id: null, open: false, pr: null } };
}

it("the incrementally kept current Run equals its definition after every write of a random walk, one Run or several per statement", async () => {
  const repo = uniqueRepo("walk");
  const keys = [await seedItem(db, repo, 1), await seedItem(db, repo, 2)];
  const next = random(20261201);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  // a few distinct times, so that ties on received_at are decided by the id
  const at = () => new Date(Date.UTC(2026, 0, 1, 0, Math.floor(next() * 6)));
  let serial = 0;
  const runsOf = async (key: string) =>
    (await db.pool.query<{ id: string; loop: string; open: boolean }>(`SELECT id, loop, state IN ('Pending', 'Waiting', 'Queued', 'Running') AS open FROM runs WHERE item_key = $1`, [key])).rows;
  const insertRun = (key: string, loop: string, state: string, id = `${repo}-r${++serial}`) =>
    db.pool.query(
      `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at)
       VALUES ($1, $1, $2, $3, $4, 1, $5, 'demo', 'p', false, $6)`,
      [id, loop, repo, key, state, at()],
    );

  for (let step = 0; step < 300; step++) {
    const key = pick(keys);
    const runs = await runsOf(key);
    const openLoops = new Set(runs.filter((r) => r.open).map((r) => r.loop));
    const freeLoops = LOOPS.filter((l) => !openLoops.has(l));
    const op =
      runs.length === 0 ? "insert" : pick(["insert", "insert", "open", "close", "move", "pr", "delete", "supersede", "supersede, no heir", "close all"]);
    const run = runs.length ? pick(runs) : undefined;
    switch (op) {
      case "insert":
        if (freeLoops.length && next() < 0.6) await insertRun(key, pick(freeLoops), pick(OPEN));
        else await insertRun(key, pick(LOOPS), pick(CLOSED));
        break;
      case "open":
        if (run && !run.open && !openLoops.has(run.loop)) await db.pool.query(`UPDATE runs SET state = $2 WHERE id = $1`, [run.id, pick(OPEN)]);
        break;
      case "close":
        if (run?.open) await db.pool.query(`UPDATE runs SET state = $2 WHERE id = $1`, [run.id, pick(CLOSED)]);
        break;
      case "move":
        await db.pool.query(`UPDATE runs SET received_at = $2 WHERE id = $1`, [run!.id, at()]);
        break;
      case "pr":
        await db.pool.query(`UPDATE runs SET pull_request_number = $2 WHERE id = $1`, [run!.id, next() < 0.3 ? null : Math.floor(next() * 5)]);
        break;
      case "delete":
        await db.pool.query(`DELETE FROM runs WHERE id = $1`, [run!.id]);
        break;
      case "supersede": {
        // the claim's shape: one statement cancels an open Run and opens the superseding Event's Run in its Loop
        const open = runs.find((r) => r.open);
        if (!open) break;
        const id = `${repo}-r${++serial}`;
        await db.pool.query(
          `WITH sup AS (UPDATE runs SET state = 'Canceled', cancel_reason = 'Superseded', superseded_by = $1 WHERE id = $2 RETURNING id),
                run AS (INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at)
                        SELECT $1, $1, $3, $4, $5, 1, 'Pending', 'demo', 'p', false, $6 FROM sup RETURNING id)
           INSERT INTO events (id, kind, loop, repo, item_key, status, submission, run_id)
           SELECT $1, 'item', $3, $4, $5, 'Claimed', '{}', id FROM run`,
          [id, open.id, open.loop, repo, key, at()],
        );
        break;
      }
      case "supersede, no heir": {
        // the claim's shape when a budget or a quota refuses: the supersede alone
        const open = runs.find((r) => r.open);
        if (!open) break;
        await db.pool.query(`UPDATE runs SET state = 'Canceled', cancel_reason = 'Superseded', superseded_by = $1 WHERE id = $2`, [`${repo}-e${++serial}`, open.id]);
        break;
      }
      case "close all":
        await db.pool.query(`UPDATE runs SET state = 'Canceled' WHERE item_key = $1 AND state IN ('Pending', 'Waiting', 'Queued', 'Running')`, [key]);
        break;
    }
    for (const k of keys) {
      const { kept, defined } = await keptAndDefined(k);
      expect(kept, `step ${step} (${op})`).toEqual(defined);
    }
  }
});
