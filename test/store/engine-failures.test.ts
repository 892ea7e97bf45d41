import { afterAll, describe, expect, it } from "vitest";
import { infraFailure } from "../../lib/engine/failure";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { ENGINE_FAILURES_BEFORE_PARKING, recordEngineFailure } from "../../lib/store/runs/engine-failures";
import { retryRun } from "../../lib/store/runs/operator-actions";
import { approve } from "../../lib/store/runs/approvals";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { beginAttempt } from "../support/attempts";
import { testDb, uniqueRepo } from "../support/db";
import { itemEvent } from "../support/events";
import { seedRepo } from "../dashboard/support/seed";

/** How engine failures park a Run: counted, then parked by its state — never while an Attempt is open. */

const db = testDb(4);
afterAll(() => db.close());

const usage = { durationMs: 5, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false };
async function openRun(repo = uniqueRepo("engine")): Promise<string> {
  const r = await recordAndClaim(db, itemEvent(repo, 1, "h"));
  if (r.tag !== "Claimed") throw new Error(r.tag);
  return r.runId;
}
const row = async (id: string) =>
  (await db.pool.query<{ state: string; waiting_reason: string | null; engine_failures: number }>(`SELECT state, waiting_reason, engine_failures FROM runs WHERE id = $1`, [id])).rows[0]!;
const failTimes = async (runId: string, n: number) => {
  let last = null;
  for (let i = 0; i < n; i++) last = await recordEngineFailure(db, runId, `boom ${i}`);
  return last;
};

describe("recordEngineFailure", () => {
  it("parks an unstarted Run as Waiting (engine_failed) at the limit, not before", async () => {
    const runId = await openRun();
    expect(await failTimes(runId, ENGINE_FAILURES_BEFORE_PARKING - 1)).toEqual({ parked: false, failures: ENGINE_FAILURES_BEFORE_PARKING - 1 });
    expect((await row(runId)).state).toBe("Pending");
    expect(await recordEngineFailure(db, runId, "boom")).toEqual({ parked: true, failures: ENGINE_FAILURES_BEFORE_PARKING, state: "Waiting" });
    expect(await row(runId)).toMatchObject({ state: "Waiting", waiting_reason: "engine_failed" });
    // it waits for a Retry, not an approval: Approve would start it with its count at the limit
    await expect(approve(db, runId, "octocat")).rejects.toMatchObject({ token: "run_parked_by_engine_failures", status: 409 });
    expect(await row(runId)).toMatchObject({ state: "Waiting", waiting_reason: "engine_failed", engine_failures: ENGINE_FAILURES_BEFORE_PARKING });
    await retryRun(db, runId, "octocat");
    expect(await row(runId)).toMatchObject({ state: "Queued", waiting_reason: null, engine_failures: 0 });
  });

  it("never parks a Run while its Attempt is open; an outcome forgets the count; between Attempts it fails (run.failed tells Atelier's error), and a retry resets the count", async () => {
    const repo = uniqueRepo("engine");
    // a Loop's webhook hears of the Runs of its repository, known by its GitHub id (ADR 0070)
    await seedRepo(db, repo, 4_100_001);
    const { rows: hooks } = await db.pool.query<{ id: string }>(
      `INSERT INTO outbound_hooks (repo, loop, url, secret) VALUES ($1, 'start-dev', 'http://127.0.0.1:9/hook', 's') RETURNING id`,
      [repo],
    );
    const runId = await openRun(repo);
    const begun = await beginAttempt(db, runId, { token: "t1", workerId: "w" });
    if (begun.tag !== "Started") throw new Error(begun.tag);
    expect(await failTimes(runId, ENGINE_FAILURES_BEFORE_PARKING + 1)).toMatchObject({ parked: false });
    expect((await row(runId)).state).toBe("Running");
    // the Attempt fails as an InfraFailure: the Run stays Running for its automatic retry, and
    // the engine moved it, so the failures before are no longer in a row
    await finishAttempt(db, begun.attempt, { tag: "Failed", failure: infraFailure("transport", "502"), usage });
    expect(await row(runId)).toMatchObject({ state: "Running", engine_failures: 0 });
    expect(await failTimes(runId, ENGINE_FAILURES_BEFORE_PARKING - 1)).toEqual({ parked: false, failures: ENGINE_FAILURES_BEFORE_PARKING - 1 });
    expect(await recordEngineFailure(db, runId, "boom")).toMatchObject({ parked: true, state: "Failed" });
    expect((await row(runId)).state).toBe("Failed");
    // the Run failed for the engine's error, not for its first Attempt's (retryable) 502
    const { rows: sent } = await db.pool.query(`SELECT payload->'run'->'failure' AS failure FROM outbound_deliveries WHERE run_id = $1`, [runId]);
    expect(sent).toEqual([{ failure: { kind: "DefectFailure", category: "internal", retryable: false, message: "boom" } }]);
    await db.pool.query(`DELETE FROM outbound_deliveries WHERE run_id = $1`, [runId]);
    await db.pool.query(`DELETE FROM outbound_hooks WHERE id = $1`, [hooks[0]!.id]);
    await retryRun(db, runId, "octocat");
    expect(await row(runId)).toMatchObject({ state: "Running", engine_failures: 0 });
  });

  it("answers null for a Run that does not exist", async () => {
    expect(await recordEngineFailure(db, "no-such-run", "boom")).toBeNull();
  });
});
