import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJobId } from "../../jobs/queues";
import { WORKER_DIED_ERROR } from "../../lib/runner/engine-failure";
import { ENGINE_FAILURES_BEFORE_PARKING } from "../../lib/store/runs/engine-failures";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, enqueueMove, issueEvent, openRun, REDIS_URL, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * A Run's job found abandoned by dead workers (BullMQ's stalled counter on the job) counts one
 * engine failure per abandon, written by the move that takes the job next, before it moves the
 * Run, once. Here the counter is set on the job before any worker takes it, as the stalled
 * checks of workers that died (and of which no live worker saw the event) would have left it.
 */

const db = testDb();
const prefix = uniquePrefix("abandons");
let world: SimWorld;
let admin: Redis;
let workspaceRoot: string;
let runner: RunnerUnderTest | undefined;

beforeAll(async () => {
  world = await startSimWorld(db);
  admin = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-abandons-ws-"));
});
afterAll(async () => {
  await runner?.close();
  admin?.disconnect();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

const engineFailures = async (runId: string) =>
  (await db.pool.query<{ engine_failures: number; engine_error: string | null; waiting_reason: string | null }>(`SELECT engine_failures, engine_error, waiting_reason FROM runs WHERE id = $1`, [runId])).rows[0]!;

/** Enqueues the Run's move with its job already found abandoned `times` times. */
async function abandonedJob(repo: string, number: number, times: number) {
  const run = await openRun(db, issueEvent(repo, number, "h1", "Fix it [demo:sleep 60]"));
  await enqueueMove(db, prefix, run.runId, run.receivedAt);
  await admin.hset(`${prefix}:attempts:${runJobId(run.runId)}`, "stc", String(times));
  return run;
}

describe("a Run's job found abandoned", () => {
  it("counts each abandon once, before the move, and the Run still runs below the limit", async () => {
    const repo = await world.addRepo("abandons");
    const below = await abandonedJob(repo, 1, ENGINE_FAILURES_BEFORE_PARKING - 1);
    const atLimit = await abandonedJob(repo, 2, ENGINE_FAILURES_BEFORE_PARKING);
    runner = await startRunner({ db, prefix, github: world.github, workspaceRoot });

    // counted before the move began: its Attempt runs (an outcome would forget the count)
    await waitFor("the Run below the limit to run", async () => (await attemptsOf(db, below.runId)).find((a) => a.state === "Running"), 60_000);
    expect(await engineFailures(below.runId)).toMatchObject({ engine_failures: ENGINE_FAILURES_BEFORE_PARKING - 1, engine_error: WORKER_DIED_ERROR });

    const parked = await waitFor("the Run at the limit to be parked", async () => {
      const row = await engineFailures(atLimit.runId);
      return row.waiting_reason === "engine_failed" ? row : null;
    }, 60_000);
    expect(parked.engine_failures).toBe(ENGINE_FAILURES_BEFORE_PARKING);
    expect(await runState(db, atLimit.runId)).toBe("Waiting");
    expect(await attemptsOf(db, atLimit.runId)).toEqual([]);
  }, 150_000);
});
