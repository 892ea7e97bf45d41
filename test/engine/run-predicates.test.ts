import { afterAll, expect, it } from "vitest";
import { isClosed, isOpen, isReviewing, isRunning, isStarted, isStartable, isUnstarted, needsWorker, RUN_STATE_SQL, type RunQuestion } from "../../lib/engine/run-predicates";
import { RUN_STATES } from "../../lib/engine/run-state";
import { TERMINAL_EVENTS } from "../../lib/store/runs/run-event-payload";
import { testDb } from "../support/db";

/** Each question of a Run's state: its SQL twin, asked of Postgres, answers as its predicate does for every state. */

const db = testDb(1);
afterAll(() => db.close());

const PREDICATES: Record<RunQuestion, (s: string) => boolean> = { isOpen, isUnstarted, isStartable, isRunning, isStarted, isReviewing, isClosed, needsWorker };

it("each SQL twin holds of exactly the states its predicate holds of, in Postgres, over every state of the enum", async () => {
  for (const [question, predicate] of Object.entries(PREDICATES) as [RunQuestion, (s: string) => boolean][]) {
    // the column is of the runs table's own enum type, as the store's statements see it
    const { rows } = await db.pool.query<{ state: string; holds: boolean }>(
      `SELECT s::text AS state, ${RUN_STATE_SQL[question]("s")} AS holds FROM unnest(enum_range(NULL::"RunState")) AS s`,
    );
    expect(rows.map((r) => r.state).sort(), question).toEqual([...RUN_STATES].sort());
    expect(Object.fromEntries(rows.map((r) => [r.state, r.holds])), question).toEqual(Object.fromEntries(RUN_STATES.map((s) => [s, predicate(s)])));
  }
});

it("answers the table of states", () => {
  const table = RUN_STATES.map((s) => [s, ...Object.values(PREDICATES).map((p) => p(s))]);
  expect(table).toEqual([
    // state        open   unstarted startable running started reviewing closed needsWorker
    ["Pending", true, true, true, false, false, false, false, true],
    ["Waiting", true, true, false, false, false, false, false, false],
    ["Queued", true, true, true, false, false, false, false, true],
    ["Running", true, false, false, true, true, false, false, true],
    // its commits wait for a writer: open (one per Loop and Item), never superseded, no worker
    ["Reviewing", true, false, false, false, true, true, false, false],
    ["Succeeded", false, false, false, false, false, false, true, false],
    ["Failed", false, false, false, false, false, false, true, false],
    ["Canceled", false, false, false, false, false, false, true, false],
  ]);
});

it("names an outbound event for each closed state, and for no other", () => {
  expect(Object.keys(TERMINAL_EVENTS).sort()).toEqual(RUN_STATES.filter(isClosed).sort());
});
