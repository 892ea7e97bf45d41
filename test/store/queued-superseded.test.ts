import { afterAll, describe, expect, it } from "vitest";
import { continueWithNewest } from "../../lib/runner/continue-with-newest";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { claimQueued, nextQueuedEvent } from "../../lib/store/runs/claim-queued";
import { recordAndClaim, type Admission, type EventInput } from "../../lib/store/runs/claim";
import { strandedQueues } from "../../lib/store/runs/runs-to-move";
import { beginAttempt } from "../support/attempts";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";
import { seedTenant, setLimits } from "../metering/support";

/**
 * Continue with newest: when a Run opens for an Event of an Item, the reads of that Loop and
 * Item queued before it are superseded (Ignored, superseded_by_newer), whichever path opened
 * the Run; a person's request keeps its turn (ADR 0073). Otherwise an older Event left Queued — its worker still re-checking the condition
 * after the Run it waited behind closed, or dead — opens a Run later, after the newer one, and
 * the Item is worked again on stale input.
 */

const db = testDb();
afterAll(() => db.close());

const lease = { token: "lease-q", workerId: "w-q" };
const succeeded = {
  tag: "Succeeded",
  summary: null,
  usage: { durationMs: 1, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false },
  branch: null,
  pullRequestNumber: null,
  headSha: null,
} as const;

async function runToSuccess(runId: string): Promise<void> {
  const begun = await beginAttempt(db, runId, lease);
  if (begun.tag !== "Started") throw new Error("expected an Attempt");
  await finishAttempt(db, begun.attempt, succeeded);
}

/**
 * An Event Queued on `repo#1` with no open Run: it was queued behind a Running Run whose
 * outcome is recorded, and the worker has read it (continueWithNewest) and is re-checking the
 * Item's condition — or died there. Returns that Event as the worker read it.
 */
async function strandedQueue(repo: string): Promise<EventInput> {
  const first = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
  if (first.tag !== "Claimed") throw new Error("expected a Run");
  const begun = await beginAttempt(db, first.runId, lease);
  if (begun.tag !== "Started") throw new Error("expected an Attempt");
  expect(await recordAndClaim(db, itemEvent(repo, 1, "h2"))).toEqual({ tag: "Queued", behind: first.runId });
  expect((await finishAttempt(db, begun.attempt, succeeded)).queuedBehind).toBe(true);
  const read = await nextQueuedEvent(db, "start-dev", itemEvent(repo, 1, "h2").itemKey);
  expect(read?.contentHash).toBe("h2");
  return read!;
}

/** After the newer Event's Run closes: nothing of the older Event is left to open a Run. */
async function expectOlderNeverOpens(repo: string, older: EventInput, newerRunId: string): Promise<void> {
  const { rows } = await db.pool.query(`SELECT status, reason FROM events WHERE id = $1`, [older.id]);
  expect(rows[0]).toEqual({ status: "Ignored", reason: "superseded_by_newer" });
  await runToSuccess(newerRunId);
  // continueWithNewest after the newer Run, the worker back from its re-check, the reconcile
  expect(await nextQueuedEvent(db, older.loop, older.itemKey)).toBeNull();
  expect(await claimQueued(db, older)).toBeNull();
  expect((await strandedQueues(db, 0)).filter((s) => s.item_key === older.itemKey)).toEqual([]);
  const runs = await db.pool.query(`SELECT prompt FROM runs WHERE repo = $1 ORDER BY received_at, id`, [repo]);
  expect(runs.rows.map((r) => r.prompt)).toEqual(["Implement #1 (h1)", "Implement #1 (h3)"]);
}

describe("a Run opened for a newer Event supersedes the older queued ones", () => {
  it("in the claim under the (Loop, Item) lock", async () => {
    const t = await seedTenant(db, "queued-locked");
    const older = await strandedQueue(t.repo);
    // a quota on the repository: the gate has something to ask, so the claim is taken under the lock
    await setLimits(db, { repo: t.repo }, { monthly_runs: 100 });
    const admitAll: Admission = async () => null;
    const newer = await recordAndClaim(db, itemEvent(t.repo, 1, "h3"), admitAll);
    expect(newer).toMatchObject({ tag: "Claimed", opened: true });
    if (newer.tag !== "Claimed") throw new Error("expected a Run");
    await expectOlderNeverOpens(t.repo, older, newer.runId);
  });

  it("and when the budget blocks the newest queued Event in its stead", async () => {
    const repo = uniqueRepo();
    const once = { maxCycles: 1 };
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1", once));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    const begun = await beginAttempt(db, first.runId, lease);
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    for (const hash of ["h2", "h3"]) expect(await recordAndClaim(db, itemEvent(repo, 1, hash, once))).toMatchObject({ tag: "Queued" });
    await finishAttempt(db, begun.attempt, succeeded);
    // the one cycle is spent: the newest queued Event is blocked, and the older one goes with it
    const newest = await nextQueuedEvent(db, "start-dev", itemEvent(repo, 1, "h3").itemKey);
    expect(await claimQueued(db, newest!)).toEqual({ tag: "Blocked", reason: "cycle_budget_exhausted", superseded: null });
    const { rows } = await db.pool.query(`SELECT content_hash, status, reason FROM events WHERE repo = $1 ORDER BY content_hash`, [repo]);
    expect(rows).toEqual([
      { content_hash: "h1", status: "Claimed", reason: null },
      { content_hash: "h2", status: "Ignored", reason: "superseded_by_newer" },
      { content_hash: "h3", status: "Blocked", reason: "cycle_budget_exhausted" },
    ]);
  });
});

describe("a turn behind a closed Run (ADR 0073)", () => {
  it("drops a queued read whose if: no longer holds, asks a person's request no if:, and hands on past a budget block, which keeps the requests", async () => {
    const repo = uniqueRepo();
    const once = { maxCycles: 1 };
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1", once));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    const begun = await beginAttempt(db, first.runId, lease);
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    const dispatch = (ask: string): EventInput => {
      const e = itemEvent(repo, 1, ask, once);
      return { ...e, id: `${e.id}:dispatch`, submission: { ...e.submission, actor: { login: "ops", permission: "write", source: "operator" } } };
    };
    // (a dispatch queued after a read replaces it: it runs the Loop on the Item as it is now)
    for (const e of [dispatch("d1"), dispatch("d2"), itemEvent(repo, 1, "h2", once)]) expect(await recordAndClaim(db, e)).toMatchObject({ tag: "Queued" });
    await finishAttempt(db, begun.attempt, succeeded);

    const moved: string[] = [];
    const result = await continueWithNewest({ db, workQueue: { moveRun: async (id) => void moved.push(id) }, recheckCondition: async () => false }, { loop: "start-dev", itemKey: itemEvent(repo, 1, "h1").itemKey });
    expect(result).toMatchObject({ tag: "Revoked" }); // the last turn: the read, whose if: no longer holds
    expect(moved).toEqual([]);
    const { rows } = await db.pool.query(`SELECT content_hash, status, reason FROM events WHERE repo = $1 ORDER BY content_hash`, [repo]);
    expect(rows).toEqual([
      { content_hash: "d1", status: "Blocked", reason: "cycle_budget_exhausted" },
      { content_hash: "d2", status: "Blocked", reason: "cycle_budget_exhausted" },
      { content_hash: "h1", status: "Claimed", reason: null },
      { content_hash: "h2", status: "Ignored", reason: "revoked" },
    ]);
  });
});
