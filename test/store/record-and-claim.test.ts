import { afterAll, describe, expect, it } from "vitest";
import { itemKey } from "../../lib/engine/ids";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { beginAttempt } from "../support/attempts";
import { claimQueued, nextQueuedEvent } from "../../lib/store/runs/claim-queued";
import { resetCycleBudget } from "../../lib/store/runs/cycle-budget";
import { cancelRun } from "../../lib/store/runs/operator-actions";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { revoke } from "../../lib/store/runs/revoke";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";

const db = testDb();
afterAll(() => db.close());

const lease = { token: "lease-1", workerId: "w1" };
const usage = { durationMs: 10, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false };

async function runState(id: string) {
  const { rows } = await db.pool.query(`SELECT state, cancel_reason, superseded_by, reserved_generation FROM runs WHERE id = $1`, [id]);
  return rows[0];
}

describe("recordAndClaim", () => {
  it("opens a Pending Run for a new Event (Claimed, opened)", async () => {
    const repo = uniqueRepo();
    const result = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    expect(result).toMatchObject({ tag: "Claimed", state: "Pending", opened: true, superseded: null });
  });

  it("returns the existing Run for a repeated Event, whatever its state (Claimed, not opened)", async () => {
    const repo = uniqueRepo();
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    await cancelRun(db, first.runId, "octo");
    const again = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    expect(again).toEqual({ tag: "Claimed", runId: first.runId, state: "Canceled", opened: false, superseded: null });
  });

  it("supersedes an unstarted Run when the content changes, and gives its reservation back", async () => {
    const repo = uniqueRepo();
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    const second = await recordAndClaim(db, itemEvent(repo, 1, "h2"));
    if (first.tag !== "Claimed" || second.tag !== "Claimed") throw new Error("expected Runs");
    expect(second).toMatchObject({ opened: true, superseded: first.runId });
    expect(await runState(first.runId)).toMatchObject({ state: "Canceled", cancel_reason: "Superseded", reserved_generation: null });
  });

  it("queues the Event behind a Running Run, then claimQueued opens the newest one", async () => {
    const repo = uniqueRepo();
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    const begun = await beginAttempt(db, first.runId, lease);
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    expect(await recordAndClaim(db, itemEvent(repo, 1, "h2"))).toEqual({ tag: "Queued", behind: first.runId });
    expect(await recordAndClaim(db, itemEvent(repo, 1, "h3"))).toEqual({ tag: "Queued", behind: first.runId });
    expect(await claimQueued(db, itemEvent(repo, 1, "h3"))).toBeNull(); // still running
    const finished = await finishAttempt(db, begun.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    expect(finished.queuedBehind).toBe(true); // the outcome says the queued Events wait for their turn
    const newest = await nextQueuedEvent(db, "start-dev", itemKey(repo, 1));
    expect(newest?.contentHash).toBe("h3");
    const opened = await claimQueued(db, newest!);
    expect(opened).toMatchObject({ tag: "Claimed", opened: true });
    if (opened?.tag !== "Claimed") throw new Error("expected a Run");
    const next = await beginAttempt(db, opened.runId, lease);
    if (next.tag !== "Started") throw new Error("expected an Attempt");
    const last = await finishAttempt(db, next.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    expect(last.queuedBehind).toBe(false); // nothing waits behind it: the runner reads no queue
    const { rows } = await db.pool.query(`SELECT content_hash, status, reason FROM events WHERE repo = $1 ORDER BY content_hash`, [repo]);
    expect(rows).toEqual([
      { content_hash: "h1", status: "Claimed", reason: null },
      { content_hash: "h2", status: "Ignored", reason: "superseded_by_newer" },
      { content_hash: "h3", status: "Claimed", reason: null },
    ]);
  });

  it("two comments' asks queued behind a running Run each keep their turn, first come first served; an edit replaces only its own", async () => {
    const repo = uniqueRepo();
    const ask = (id: number, hash: string) => {
      const e = itemEvent(repo, 3, hash, { loop: "answer" });
      return { ...e, id: `${e.id}:comment:${id}`, submission: { ...e.submission, comment: { kind: "issue_comment", id, url: "u", author: `p${id}` } } };
    };
    const first = await recordAndClaim(db, ask(1, "a1"));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    // an unstarted request is not superseded by another person's comment: the comment waits
    expect(await recordAndClaim(db, ask(2, "b1"))).toEqual({ tag: "Queued", behind: first.runId });
    const begun = await beginAttempt(db, first.runId, lease);
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    expect(await recordAndClaim(db, ask(3, "c1"))).toEqual({ tag: "Queued", behind: first.runId });
    expect(await recordAndClaim(db, ask(2, "b2"))).toEqual({ tag: "Queued", behind: first.runId }); // comment 2 edited
    const finished = await finishAttempt(db, begun.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    expect(finished.queuedBehind).toBe(true);
    const next = await nextQueuedEvent(db, "answer", itemKey(repo, 3));
    expect(next?.contentHash).toBe("c1"); // comment 3 came before comment 2's edit
    const opened = await claimQueued(db, next!);
    if (opened?.tag !== "Claimed") throw new Error("expected a Run");
    // comment 2's ask still waits: the Run that opened hands over to it
    expect((await db.pool.query(`SELECT queued_behind FROM runs WHERE id = $1`, [opened.runId])).rows[0].queued_behind).toBe(true);
    const { rows } = await db.pool.query(`SELECT content_hash, status, reason FROM events WHERE repo = $1 ORDER BY content_hash`, [repo]);
    expect(rows).toEqual([
      { content_hash: "a1", status: "Claimed", reason: null },
      { content_hash: "b1", status: "Ignored", reason: "superseded_by_newer" },
      { content_hash: "b2", status: "Queued", reason: null },
      { content_hash: "c1", status: "Claimed", reason: null },
    ]);
  });

  it("a queued Event that finds another Run open marks that Run, so its outcome hands over", async () => {
    const repo = uniqueRepo();
    const first = await recordAndClaim(db, itemEvent(repo, 2, "h1"));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    const begun = await beginAttempt(db, first.runId, lease);
    if (begun.tag !== "Started") throw new Error("expected an Attempt");
    expect(await claimQueued(db, itemEvent(repo, 2, "h1"))).toBeNull(); // nothing queued: nothing marked
    expect((await db.pool.query(`SELECT queued_behind FROM runs WHERE id = $1`, [first.runId])).rows[0].queued_behind).toBe(false);
    await db.pool.query(
      `INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, submission)
       VALUES ('stranded-${repo}', 'item', 'start-dev', $1, $2, 2, 'h0', 0, 'Queued', '{}')`,
      [repo, itemKey(repo, 2)],
    );
    expect(await claimQueued(db, { ...itemEvent(repo, 2, "h0"), id: `stranded-${repo}` })).toBeNull();
    const finished = await finishAttempt(db, begun.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    expect(finished.queuedBehind).toBe(true);
  });

  it("ignores an Event that a revoke marked ignored", async () => {
    const repo = uniqueRepo();
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    await beginAttempt(db, first.runId, lease);
    await recordAndClaim(db, itemEvent(repo, 1, "h2"));
    expect(await revoke(db, "start-dev", itemKey(repo, 1))).toEqual([]); // running: untouched
    expect(await recordAndClaim(db, itemEvent(repo, 1, "h2"))).toEqual({ tag: "Ignored", reason: "ignored_event" });
    expect(await runState(first.runId)).toMatchObject({ state: "Running" });
  });

  it("revokes unstarted Runs when the Item stops matching", async () => {
    const repo = uniqueRepo();
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    if (first.tag !== "Claimed") throw new Error("expected a Run");
    expect(await revoke(db, "start-dev", itemKey(repo, 1))).toEqual([first.runId]);
    expect(await runState(first.runId)).toMatchObject({ state: "Canceled", cancel_reason: "Revoked", reserved_generation: null });
  });

  it("supersedes unstarted Runs within the budget, blocks at it and stores the ask, and the reset opens the next generation", async () => {
    const repo = uniqueRepo();
    const opts = { maxCycles: 2 };
    const done = async (hash: string) => {
      const r = await recordAndClaim(db, itemEvent(repo, 1, hash, opts));
      if (r.tag !== "Claimed") throw new Error(`expected a Run, got ${r.tag}`);
      const b = await beginAttempt(db, r.runId, lease);
      if (b.tag !== "Started") throw new Error("expected an Attempt");
      await finishAttempt(db, b.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    };
    await done("h1");
    const pending = await recordAndClaim(db, itemEvent(repo, 1, "h2", opts)); // 2nd reservation, unstarted
    if (pending.tag !== "Claimed") throw new Error("expected a Run");
    // h3 supersedes the unstarted h2 Run (reservation given back), then takes the 2nd reservation itself.
    const third = await recordAndClaim(db, itemEvent(repo, 1, "h3", opts));
    expect(third).toMatchObject({ tag: "Claimed", opened: true, superseded: pending.runId });
    if (third.tag !== "Claimed") throw new Error("expected a Run");
    // h4 supersedes h3's unstarted Run, but 1 done + 0 unstarted = 1 < 2 → opens. Start it and finish it.
    const fourth = await recordAndClaim(db, itemEvent(repo, 1, "h4", opts));
    if (fourth.tag !== "Claimed") throw new Error("expected a Run");
    const b = await beginAttempt(db, fourth.runId, lease);
    if (b.tag !== "Started") throw new Error("expected an Attempt");
    await finishAttempt(db, b.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    const blocked = await recordAndClaim(db, itemEvent(repo, 1, "h5", opts));
    expect(blocked).toEqual({ tag: "Blocked", reason: "cycle_budget_exhausted", superseded: null });
    const { rows } = await db.pool.query(`SELECT generation, ask FROM cycle_budgets WHERE item_key = $1`, [itemKey(repo, 1)]);
    expect(rows[0]).toMatchObject({ generation: 0, ask: { loop: "start-dev", reserved: 2, maxCycles: 2 } });

    // every later open on the Item is blocked until the reset, even for another Loop
    expect(await recordAndClaim(db, itemEvent(repo, 1, "h5", { ...opts, loop: "review" }))).toMatchObject({ tag: "Blocked" });

    // the reset bumps the generation; the old generation's Events are ignored, new ones open
    expect(await resetCycleBudget(db, itemKey(repo, 1), "octo")).toMatchObject({ generation: 1 });
    expect(await recordAndClaim(db, itemEvent(repo, 1, "h6", { ...opts, generation: 0 }))).toEqual({
      tag: "Ignored",
      reason: "old_generation",
    });
    expect(await recordAndClaim(db, itemEvent(repo, 1, "h5", { ...opts, generation: 1 }))).toMatchObject({ tag: "Claimed", opened: true });
    const { rows: repoRows } = await db.pool.query(`SELECT count(*)::int AS n FROM events WHERE id LIKE 'cycle-budget-reset:%' AND repo = $1`, [repo]);
    expect(repoRows[0].n).toBe(1);
  });

  it("a supersede commits when the budget then blocks: the unstarted Run is canceled, and the newer Event opens nothing", async () => {
    const repo = uniqueRepo();
    const r1 = await recordAndClaim(db, itemEvent(repo, 1, "h1", { maxCycles: 2 }));
    if (r1.tag !== "Claimed") throw new Error("expected a Run");
    const b = await beginAttempt(db, r1.runId, lease);
    if (b.tag !== "Started") throw new Error("expected an Attempt");
    await finishAttempt(db, b.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    const pending = await recordAndClaim(db, itemEvent(repo, 1, "h2", { maxCycles: 2 })); // the 2nd cycle, unstarted
    if (pending.tag !== "Claimed") throw new Error("expected a Run");
    // the config now says 1: the newer Event supersedes the unstarted Run, and 1 done of 1 blocks it
    const third = await recordAndClaim(db, itemEvent(repo, 1, "h3", { maxCycles: 1 }));
    expect(third).toEqual({ tag: "Blocked", reason: "cycle_budget_exhausted", superseded: pending.runId });
    expect(await runState(pending.runId)).toMatchObject({ state: "Canceled", cancel_reason: "Superseded", reserved_generation: null });
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE repo = $1 AND state IN ('Pending','Waiting','Queued','Running')`, [repo]);
    expect(rows[0].n).toBe(0);
  });

  it("a Loop whose budget is spent opens nothing and leaves no open Run", async () => {
    const repo = uniqueRepo();
    const opts = { maxCycles: 1 };
    const r1 = await recordAndClaim(db, itemEvent(repo, 1, "h1", opts));
    if (r1.tag !== "Claimed") throw new Error("expected a Run");
    const b = await beginAttempt(db, r1.runId, lease);
    if (b.tag !== "Started") throw new Error("expected an Attempt");
    await finishAttempt(db, b.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    // a schedule-less second Loop has its own budget; this one is at 1/1
    expect(await recordAndClaim(db, itemEvent(repo, 1, "h2", opts))).toMatchObject({ tag: "Blocked" });
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE repo = $1 AND state IN ('Pending','Waiting','Queued','Running')`, [repo]);
    expect(rows[0].n).toBe(0);
  });

  it("schedule Ticks have no cycle budget", async () => {
    const repo = uniqueRepo();
    for (let i = 0; i < 5; i++) {
      const r = await recordAndClaim(db, { ...itemEvent(repo, 0, `t${i}`, { maxCycles: null, loop: "nightly" }), kind: "tick" });
      expect(r).toMatchObject({ tag: "Claimed", opened: true });
      if (r.tag === "Claimed") await cancelRun(db, r.runId, "octo");
    }
  });
});
