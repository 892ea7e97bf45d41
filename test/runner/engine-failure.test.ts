import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadNeedsYou } from "../../lib/dashboard/needs-you";
import { loadRunDetail } from "../../lib/dashboard/run-detail";
import { cancelRun, retryRun } from "../../lib/runner/operator";
import { ENGINE_FAILURES_BEFORE_PARKING } from "../../lib/store/runs/engine-failures";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * Dead-letter for engine failures: a Run whose job throws inside Atelier every time (here
 * Postgres itself refuses its Attempt's row, through a trigger: a real fault, no mock) is
 * parked after N failures with its error, shows in Needs you with retry and cancel, and an
 * operator's retry moves it again once the fault is gone.
 */

let pdb: PrivateDb;
let world: SimWorld;
let runner: RunnerUnderTest;
let workspaceRoot: string;
const prefix = uniquePrefix("engine");

beforeAll(async () => {
  pdb = await createPrivateDb("engine");
  world = await startSimWorld(pdb.db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-engine-ws-"));
  runner = await startRunner({ db: pdb.db, prefix, github: world.github, workspaceRoot });
}, 60_000);
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await pdb?.drop();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

/** A token the failing statement's error carries: the error kept on the Run masks it. */
const LEAKED_TOKEN = `ghs_${"x9".repeat(18)}`;
const refuseAttemptsOf = async (runId: string) => {
  await pdb.db.pool.query(`CREATE OR REPLACE FUNCTION refuse_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'the engine test refuses the Attempts of % (with ${LEAKED_TOKEN})', NEW.run_id; END $$`);
  await pdb.db.pool.query(`CREATE TRIGGER refuse_attempt BEFORE INSERT ON attempts FOR EACH ROW WHEN (NEW.run_id = '${runId}') EXECUTE FUNCTION refuse_attempt()`);
};
const allowAttempts = () => pdb.db.pool.query(`DROP TRIGGER IF EXISTS refuse_attempt ON attempts`);

const runRow = async (runId: string) =>
  (await pdb.db.pool.query<{ state: string; waiting_reason: string | null; engine_failures: number; engine_error: string | null }>(
    `SELECT state, waiting_reason, engine_failures, engine_error FROM runs WHERE id = $1`,
    [runId],
  )).rows[0]!;

describe("a Run whose job fails inside Atelier every time", () => {
  it("is parked after N failures with its error, in Needs you with retry and cancel; retry works once the fault is gone", async () => {
    const repo = await world.addRepo("engine");
    const run = await openRun(pdb.db, issueEvent(repo, 61, "h1", "Meet a broken engine"));
    await refuseAttemptsOf(run.runId);
    try {
      await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
      await waitFor("the Run to be parked", async () => (await runState(pdb.db, run.runId)) === "Waiting" || null, 60_000, 200);
    } finally {
      await allowAttempts();
    }
    const parked = await runRow(run.runId);
    expect(parked).toMatchObject({ state: "Waiting", waiting_reason: "engine_failed", engine_failures: ENGINE_FAILURES_BEFORE_PARKING });
    expect(parked.engine_error).toContain(`the engine test refuses the Attempts of ${run.runId} (with ***)`);
    expect(parked.engine_error).not.toContain(LEAKED_TOKEN);
    expect(await attemptsOf(pdb.db, run.runId)).toEqual([]);
    // parked, it is moved no more: a reconcile's job for it finds nothing to do
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await waitFor("the job to find it parked", async () => runner.outcomes.some((o) => o.tag === "Idle" && o.reason === "Waiting") || null, 30_000);

    const needs = await loadNeedsYou(pdb.db, [repo]);
    expect(needs.counts).toMatchObject({ engine_failure: 1, approval: 0 });
    const need = needs.needs.find((n) => n.runId === run.runId)!;
    expect(need).toMatchObject({ kind: "engine_failure", action: { kind: "retry_or_cancel", runId: run.runId } });
    expect(need.detail).toContain(`${ENGINE_FAILURES_BEFORE_PARKING} times`);
    expect(need.detail).toContain("refuses the Attempts");
    const detail = await loadRunDetail(pdb.db, run.runId);
    expect(detail.actions).toEqual(["retry", "cancel"]);
    expect(detail.waitsFor).toMatch(/Atelier failed moving it; retry or cancel/);

    const ops = { db: pdb.db, redis: runner.redis, workQueue: runner.queue, recheckCondition: async () => true, keyPrefix: `${prefix}:` };
    expect(await retryRun(ops, run.runId, "octocat")).toMatchObject({ state: "Queued", waiting_reason: null });
    await waitFor("the retried Run to succeed", async () => (await runState(pdb.db, run.runId)) === "Succeeded" || null, 60_000, 200);
    expect(await runRow(run.runId)).toMatchObject({ engine_failures: 0, engine_error: null });
    expect((await loadNeedsYou(pdb.db, [repo])).counts.engine_failure).toBe(0);
  }, 180_000);

  it("an agent's failure is no engine failure: nothing is counted", async () => {
    const repo = await world.addRepo("agentfail");
    const run = await openRun(pdb.db, issueEvent(repo, 62, "h1", "Fail as an agent [demo:fail]"));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await waitFor("the Run to fail", async () => (await runState(pdb.db, run.runId)) === "Failed" || null, 60_000, 200);
    expect(await runRow(run.runId)).toMatchObject({ engine_failures: 0, engine_error: null });
    const ops = { db: pdb.db, redis: runner.redis, workQueue: runner.queue, recheckCondition: async () => true, keyPrefix: `${prefix}:` };
    await cancelRun(ops, run.runId, "octocat").catch(() => undefined);
  }, 120_000);
});
