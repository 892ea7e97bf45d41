import { afterAll, expect, it } from "vitest";
import { cancelRun } from "../../lib/store/runs/operator-actions";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { RUN_CHANGED_CHANNEL } from "../../lib/store/runs/run-changed";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";

const db = testDb();
afterAll(() => db.close());

it("notifies every Run change on commit, so mirrors and live views follow without polling", async () => {
  const listener = await db.pool.connect();
  const seen: string[] = [];
  listener.on("notification", (n) => n.channel === RUN_CHANGED_CHANNEL && seen.push(n.payload ?? ""));
  await listener.query(`LISTEN ${RUN_CHANGED_CHANNEL}`);
  try {
    const repo = uniqueRepo();
    const first = await recordAndClaim(db, itemEvent(repo, 1, "h1"));
    const second = await recordAndClaim(db, itemEvent(repo, 1, "h2")); // supersedes the first
    if (first.tag !== "Claimed" || second.tag !== "Claimed") throw new Error("expected Runs");
    await expect.poll(() => seen.includes(first.runId) && seen.includes(second.runId)).toBe(true);
    // changes close together are coalesced; a later change is announced again
    seen.length = 0;
    await cancelRun(db, second.runId, "octo");
    await expect.poll(() => seen).toContain(second.runId);
    // a rolled-back change is never announced
    seen.length = 0;
    await expect(cancelRun(db, second.runId, "octo")).rejects.toMatchObject({ status: 409 });
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).not.toContain(second.runId);
  } finally {
    await listener.query(`UNLISTEN ${RUN_CHANGED_CHANNEL}`);
    listener.release();
  }
});
