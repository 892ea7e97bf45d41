import { afterAll, expect, it } from "vitest";
import { agentFailure } from "../../lib/engine/failure";
import { itemKey } from "../../lib/engine/ids";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { cancelRun, retryRun } from "../../lib/store/runs/operator-actions";
import { admission } from "../../lib/metering/admission";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { seedTenant, setLimits } from "../metering/support";
import { seedItem } from "../dashboard/support/seed";
import { beginAttempt } from "../support/attempts";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";

const db = testDb();
afterAll(() => db.close());
const usage = { durationMs: 5, tokensIn: 10, tokensOut: 20, costUsd: 0.01, costEstimated: false };

/** What the Item keeps: its current Run's id, and whether that Run is open and its pull request. */
async function keptFacts(key: string) {
  const { rows } = await db.pool.query(`SELECT current_run_id AS id, current_run_open AS open, current_run_pull_request AS pr FROM items WHERE key = $1`, [key]);
  return rows[0];
}
const kept = async (key: string) => (await keptFacts(key))?.id ?? null;

/** The current Run by its definition, read from the Runs themselves: the open one, else the newest. */
async function currentFacts(key: string) {
  const { rows } = await db.pool.query<{ id: string; state: string; received_at: Date; pull_request_number: number | null }>(
    `SELECT id, state, received_at, pull_request_number FROM runs WHERE item_key = $1`,
    [key],
  );
  const open = (s: string) => ["Pending", "Waiting", "Queued", "Running"].includes(s);
  rows.sort((a, b) => Number(open(b.state)) - Number(open(a.state)) || b.received_at.getTime() - a.received_at.getTime() || (a.id < b.id ? 1 : -1));
  const run = rows[0];
  return { id: run?.id ?? null, open: run ? open(run.state) : false, pr: run?.pull_request_number ?? null };
}

async function claim(repo: string, hash: string, loop = "start-dev"): Promise<string> {
  const r = await recordAndClaim(db, itemEvent(repo, 1, hash, { loop, maxCycles: null }));
  if (r.tag !== "Claimed") throw new Error(`expected a Run, got ${r.tag}`);
  return r.runId;
}

it("an Item keeps its current Run through every write that changes it: open, supersede, another Loop's Run, a start, an end, a retry, a removal", async () => {
  const repo = uniqueRepo("cur");
  const key = await seedItem(db, repo, 1);
  expect(await kept(key)).toBeNull();
  const checks: (string | null)[] = [];
  const check = async () => {
    const want = await currentFacts(key);
    expect(await keptFacts(key)).toEqual(want);
    checks.push(want.id);
  };

  const first = await claim(repo, "h1");
  await check(); // opened
  const second = await claim(repo, "h2");
  expect(await db.pool.query(`SELECT state FROM runs WHERE id = $1`, [first])).toMatchObject({ rows: [{ state: "Canceled" }] });
  await check(); // the supersede closed one and opened the other
  const review = await claim(repo, "h3", "review");
  await check(); // another Loop's open Run, newer

  const b = await beginAttempt(db, review, { token: "t", workerId: "w" });
  if (b.tag !== "Started") throw new Error("expected an Attempt");
  await check(); // started: still open, still current
  await finishAttempt(db, b.attempt, { tag: "Failed", failure: agentFailure("agent_exit", "exit 1"), usage });
  await check(); // ended: the other open Run is current again
  expect(await kept(key)).toBe(second);
  await retryRun(db, review, "octo");
  await check(); // reopened by the operator's retry
  expect(await kept(key)).toBe(review);
  await db.pool.query(`UPDATE runs SET pull_request_number = 12 WHERE id = $1`, [review]);
  await check(); // its pull request
  expect(await keptFacts(key)).toMatchObject({ open: true, pr: 12 });

  await cancelRun(db, review, "octo");
  await cancelRun(db, second, "octo");
  await check(); // nothing open: the newest
  expect(await kept(key)).toBe(review);
  await db.pool.query(`DELETE FROM attempts WHERE run_id = $1`, [review]);
  await db.pool.query(`DELETE FROM runs WHERE id = $1`, [review]);
  await check(); // removed
  expect(checks).toEqual([first, second, review, review, second, review, review, review, second]);

  // an Item stored after its Runs finds its current Run
  await db.pool.query(`DELETE FROM items WHERE key = $1`, [key]);
  await seedItem(db, repo, 1);
  expect(await kept(itemKey(repo, 1))).toBe(second);
});

it("the current Run's lookup is planned inside the statement that asks it (inlined, never a function call planned anew), and gives one row of nulls for an Item without Runs", async () => {
  const key = itemKey(uniqueRepo("cur-plan"), 1);
  const { rows: plan } = await db.pool.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) SELECT * FROM item_current_run($1)`, [key]);
  const nodes = JSON.stringify(plan[0]!["QUERY PLAN"]);
  expect(nodes).not.toContain("Function Scan");
  expect(nodes).toContain('"Relation Name":"runs"');
  const { rows } = await db.pool.query(`SELECT * FROM item_current_run($1)`, [key]);
  expect(rows).toEqual([{ id: null, open: null, pull_request_number: null }]);
});

it("a supersede that opens nothing (a quota refuses the Event that supersedes) leaves the Item's current Run closed, as its Runs say", async () => {
  const gate = admission();
  const t = await seedTenant(db, "cur-refused");
  const key = await seedItem(db, t.repo, 1);
  const pending = await recordAndClaim(db, itemEvent(t.repo, 1, "h1", { maxCycles: null }), gate);
  if (pending.tag !== "Claimed") throw new Error(`expected a Run, got ${pending.tag}`);
  expect(await keptFacts(key)).toEqual({ id: pending.runId, open: true, pr: null });
  await setLimits(db, { repo: t.repo }, { monthly_runs: 1 });
  expect(await recordAndClaim(db, itemEvent(t.repo, 1, "h2", { maxCycles: null }), gate)).toEqual({
    tag: "Blocked",
    reason: "repo_quota_exceeded",
    superseded: pending.runId,
  });
  expect(await keptFacts(key)).toEqual(await currentFacts(key));
  expect(await keptFacts(key)).toEqual({ id: pending.runId, open: false, pr: null });
});
