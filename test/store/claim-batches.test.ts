import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../lib/store/db";
import { recordAndClaim, writeClaimsAtOnce } from "../../lib/store/record-and-claim";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";
import { emptyGenericDb, wholeScans } from "../support/generic-plans";
import { seedTenant } from "../metering/support";
import { beginAttempt } from "../support/attempts";

// The optimistic claim of several Events in one statement (ADR 0030). Each Event is decided on
// its own facts, and writes only what its own decision says.

let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.close();
});

const eventRow = async (id: string) => (await db.pool.query(`SELECT status, run_id FROM events WHERE id = $1`, [id])).rows[0];
const runRow = async (id: string) => (await db.pool.query(`SELECT state, superseded_by FROM runs WHERE id = $1`, [id])).rows[0];

describe("claims of several repositories in one statement", () => {
  it("open each Event's Run on its own facts: a fresh Item opens, a Running one writes nothing, an unstarted one is superseded by its heir", async () => {
    const [fresh, running, unstarted] = [uniqueRepo("cb"), uniqueRepo("cb"), uniqueRepo("cb")];
    const busy = await recordAndClaim(db, itemEvent(running, 1, "old", { maxCycles: null }));
    const begun = await beginAttempt(db, (busy as { runId: string }).runId, { token: "t", workerId: "w" });
    expect(begun.tag).toBe("Started");
    const stale = await recordAndClaim(db, itemEvent(unstarted, 1, "old", { maxCycles: null }));
    const staleRun = (stale as { runId: string }).runId;

    const events = [itemEvent(fresh, 1, "new"), itemEvent(running, 1, "new"), itemEvent(unstarted, 1, "new", { maxCycles: null })];
    const answers = await writeClaimsAtOnce(db.batch, events, true);

    expect(answers[0]!.opened_version).not.toBeNull();
    expect(await eventRow(events[0]!.id)).toMatchObject({ status: "Claimed" });
    // a Run is Running on that Item: this statement writes nothing for it (the locked claim queues it)
    expect(answers[1]).toMatchObject({ opened_version: null, superseded_id: null, blocking: { state: "Running" } });
    expect(await eventRow(events[1]!.id)).toBeUndefined();
    expect(answers[2]).toMatchObject({ superseded_id: staleRun });
    expect(answers[2]!.opened_version).not.toBeNull();
    expect(await runRow(staleRun)).toMatchObject({ state: "Canceled", superseded_by: events[2]!.id });
    expect(await eventRow(events[2]!.id)).toMatchObject({ status: "Claimed" });

    // the Event left undecided goes through the store's claim to the locked one
    expect(await recordAndClaim(db, events[1]!)).toMatchObject({ tag: "Queued" });
  });

  it("charge each registered repository's counter and take its rate token once per Event", async () => {
    const tenants = [await seedTenant(db, "cb"), await seedTenant(db, "cb")];
    const events = tenants.map((t) => itemEvent(t.repo, 1, "h"));
    const answers = await writeClaimsAtOnce(db.batch, events, true);
    expect(answers.map((a) => a.opened_version === null)).toEqual([false, false]);
    for (const t of tenants) {
      const scope = `repo:${t.repo.toLowerCase()}`;
      const counter = await db.pool.query(`SELECT runs FROM usage_counters WHERE scope = $1`, [scope]);
      expect(counter.rows).toEqual([{ runs: 1 }]);
      const bucket = await db.pool.query(`SELECT tokens < 30 AS taken FROM rate_buckets WHERE scope = $1`, [scope]);
      expect(bucket.rows).toEqual([{ taken: true }]);
    }
  });

  it("write nothing at all when a constraint refuses one of them: each is then claimed alone, and the refused one under the lock", async () => {
    const [other, contested] = [uniqueRepo("cb"), uniqueRepo("cb")];
    const mine = itemEvent(other, 1, "h", { maxCycles: null });
    const theirs = itemEvent(contested, 1, "theirs", { maxCycles: null });
    const late = itemEvent(contested, 1, "late", { maxCycles: null });
    // another process opens a Run of the contested Item and has not committed yet
    const holder = await db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(
        `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at)
         VALUES ($1, $2, $3, $4, $5, 1, 'Pending', 'demo', 'p', false, now())`,
        [`${theirs.id}-run`, theirs.id, theirs.loop, theirs.repo, theirs.itemKey],
      );
      const batch = writeClaimsAtOnce(db.batch, [mine, late], false);
      await expect(batch).rejects.toMatchObject({ code: expect.stringMatching(/^(55P03|23P01)$/) });
      expect(await eventRow(mine.id)).toBeUndefined();
      await holder.query("COMMIT");
    } finally {
      holder.release();
    }
    expect(await recordAndClaim(db, mine)).toMatchObject({ tag: "Claimed", opened: true });
    expect(await recordAndClaim(db, late)).toMatchObject({ tag: "Claimed", opened: true, superseded: `${theirs.id}-run` });
  });
});

describe("the claims' statement planned on an empty database", () => {
  let empty: Awaited<ReturnType<typeof emptyGenericDb>>;
  beforeAll(async () => {
    empty = await emptyGenericDb("claim_plan");
  });
  afterAll(async () => {
    await empty.drop();
  });

  it("keeps index scans once the tables are large, with no ANALYZE between", async () => {
    const client = await empty.generic.batch.connect();
    try {
      const first = itemEvent("plan/repo", 1, "h");
      expect((await writeClaimsAtOnce(client, [first], true))[0]!.opened_version).not.toBeNull();
      await empty.priv.db.pool.query(`
        INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, reserved_generation)
        SELECT 'run-' || g, 'event-' || g, 'start-dev', 'plan/repo', 'plan/repo#' || g, g, 'Succeeded', 'demo', 'p', false, now(), 0
          FROM generate_series(2, 20001) g;
        INSERT INTO events (id, kind, loop, repo, item_key, number, generation, status, submission, run_id)
        SELECT 'event-' || g, 'item', 'start-dev', 'plan/repo', 'plan/repo#' || g, g, 0, 'Claimed', '{}', 'run-' || g FROM generate_series(2, 20001) g;
        INSERT INTO cycle_budgets (item_key, repo, generation) SELECT 'plan/repo#' || g, 'plan/repo', 0 FROM generate_series(2, 20001) g`);
      const { rows } = await client.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE name = 'atelier-claims-at-once-metered'`);
      expect(rows).toHaveLength(1);
      const input = [{ k: 0, id: "e-9", kind: "item", loop: "start-dev", repo: "plan/repo", item_key: "plan/repo#9", number: 9, generation: 0, max_cycles: 3, submission: first.submission, run_id: "r-9" }];
      const whole = await wholeScans(client, "atelier-claims-at-once-metered", input, ["runs", "events", "cycle_budgets", "usage_counters", "rate_buckets"]);
      expect(whole).toEqual([]);
    } finally {
      client.release();
    }
  });
});
