import { afterAll, beforeAll, expect, it } from "vitest";
import { isOpen, needsWorker } from "../../lib/engine/run-predicates";
import { RUN_STATES } from "../../lib/engine/run-state";
import { createDb, type Db } from "../../lib/store/db";
import { admitAttempt } from "../../lib/metering/admission";
import { startAttempt } from "../../lib/store/attempts";
import { recordAndClaim } from "../../lib/store/record-and-claim";
import { inPhase } from "../../lib/store/run-phase";
import { readRunSnapshot } from "../../lib/store/run-snapshot";
import { itemEvent } from "../support/events";
import { createPrivateDb, type PrivateDb } from "../support/private-db";

// a database of its own: the test reads the table's update counters, which other files would move
let priv: PrivateDb;
/** one connection, so the statistics this backend flushes are the ones the test reads */
let one: Db;
beforeAll(async () => {
  priv = await createPrivateDb("phase");
  one = createDb(priv.url, 1);
});
afterAll(async () => {
  await one.close();
  await priv.drop();
});

async function claimedRun(db: Db, number: number): Promise<string> {
  const claim = await recordAndClaim(db, itemEvent("phase/repo", number, "h"));
  if (claim.tag !== "Claimed") throw new Error(claim.tag);
  return claim.runId;
}

it("runs.phase agrees with the state machine: open is Active or Waiting, a Run a worker moves is Active", async () => {
  const runId = await claimedRun(priv.db, 1);
  const client = await priv.db.pool.connect();
  try {
    await client.query("BEGIN");
    for (const state of RUN_STATES) {
      const { rows } = await client.query(
        `UPDATE runs SET state = $2 WHERE id = $1
         RETURNING ${inPhase("runs", "Active", "Waiting")} AS open, ${inPhase("runs", "Active")} AS moving`,
        [runId, state],
      );
      expect({ state, ...rows[0] }).toEqual({ state, open: isOpen(state), moving: needsWorker(state) });
    }
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
});

it("a Run's start rewrites no index entry of runs: Pending → Running is a HOT update", async () => {
  const runId = await claimedRun(one, 2);
  const counters = async () => {
    // the flush happens once this statement is done, so the next read sees every earlier write
    // (the start's own, group-committed on the batch connection, too)
    await one.pool.query("SELECT pg_stat_force_next_flush()");
    await one.batch.query("SELECT pg_stat_force_next_flush()");
    const { rows } = await one.pool.query<{ upd: string; hot: string }>(
      `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relid = 'runs'::regclass`,
    );
    return { updates: Number(rows[0]!.upd), hot: Number(rows[0]!.hot) };
  };
  const before = await counters();
  const snap = await readRunSnapshot(one, runId);
  const started = await startAttempt(one, snap!, { token: "t", workerId: "w" }, admitAttempt);
  expect(started.tag).toBe("Started");
  const after = await counters();
  expect({ updates: after.updates - before.updates, hot: after.hot - before.hot }).toEqual({ updates: 1, hot: 1 });
});
