import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDb } from "../support/db";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis";
import { pidsWithArgument } from "../support/processes";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, issueEvent, openRun, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * A live worker whose own lease runs out (Redis does not answer for a whole TTL — here it is
 * paused, so the renewal already sent is answered late) stops its agent and closes its
 * Attempt itself: the Run's next Attempt starts without the orphan sweep (none runs here), and
 * never beside the first one's agent.
 */

const db = testDb();
const prefix = uniquePrefix("ranout");
// long enough that a busy machine does not lose the lease before Redis is paused
const TTL = 5_000;
let redis: PrivateRedis;
let admin: Redis;
let world: SimWorld;
let workspaceRoot: string;
let runner: RunnerUnderTest;

beforeAll(async () => {
  redis = await startPrivateRedis();
  admin = new Redis(redis.url, { maxRetriesPerRequest: null });
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-ranout-ws-"));
  runner = await startRunner({ db, prefix, github: world.github, workspaceRoot, leaseTtlMs: TTL, redisUrl: redis.url });
});
afterAll(async () => {
  await runner?.close();
  admin?.disconnect();
  await world?.close();
  await redis?.stop();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

const childOf = (attemptId: string) => pidsWithArgument(`atelier-demo-child:${attemptId}`);

describe("a live worker whose lease ran out", () => {
  it("closes its own Attempt at once, and the retry runs alone", async () => {
    const repo = await world.addRepo("ranout");
    const run = await openRun(db, issueEvent(repo, 7, "h1", "Run long [demo:spawn-child] [demo:sleep 60]"));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    const first = await waitFor("the first Attempt", async () => (await attemptsOf(db, run.runId)).find((a) => a.state === "Running"), 30_000);
    await waitFor("its agent's child", async () => childOf(first.id).length > 0 || null, 60_000);

    // Redis answers nobody for more than two TTLs: the renewal in flight is answered only then
    await admin.call("CLIENT", "PAUSE", String(3 * TTL), "ALL");
    const closed = await waitFor("the first Attempt closed by its worker", async () => (await attemptsOf(db, run.runId)).find((a) => a.id === first.id && a.state !== "Running"), 30_000);
    expect(closed).toMatchObject({ state: "Failed", failure_kind: "InfraFailure", failure_category: "lease_lost" });
    expect(childOf(first.id)).toEqual([]);

    const second = await waitFor("the second Attempt", async () => (await attemptsOf(db, run.runId)).find((a) => a.number === 2 && a.state === "Running"), 60_000);
    await waitFor("its agent's child", async () => childOf(second.id).length > 0 || null, 60_000);
    expect(childOf(first.id)).toEqual([]);
    expect((await attemptsOf(db, run.runId)).filter((a) => a.state === "Running")).toHaveLength(1);
  }, 240_000);
});
