import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newLeaseToken } from "../../lib/runner/lease";
import { redisNames } from "../../lib/runner/redis-names";
import { markWorkerStopped, registerWorker } from "../../lib/store/runs/worker-registry";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, issueEvent, openRun, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * A worker that died after it took a Run's lease and before its Attempt began leaves the key
 * behind, with no Attempt to say whose it is. Its token names the worker: once the registry
 * holds that worker as stopped (a worker of its host found its pid gone), the next move of the
 * Run deletes the key and starts the Attempt at once, instead of waiting a whole TTL. A lease
 * whose worker is only silent is left alone.
 */

const db = testDb();
const prefix = uniquePrefix("stoppedholder");
let world: SimWorld;
let workspaceRoot: string;
let runner: RunnerUnderTest;

beforeAll(async () => {
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-stoppedholder-ws-"));
  runner = await startRunner({ db, prefix, github: world.github, workspaceRoot, leaseTtlMs: 3_000 });
});
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

const worker = (id: string) => ({ id, host: "elsewhere", pid: 4242, version: "test", slots: 1 });

describe("a Run's lease left by a worker that died before its Attempt began", () => {
  it("is taken from a stopped worker at once, and left to a worker that is only silent", async () => {
    const names = redisNames(`${prefix}:`);
    const repo = await world.addRepo("stoppedholder");
    const dead = worker(`${prefix}-dead:1`);
    const silent = worker(`${prefix}-silent:1`);
    await registerWorker(db, dead);
    await registerWorker(db, silent);
    await markWorkerStopped(db, dead.id);
    const left = await openRun(db, issueEvent(repo, 1, "h1", "Left by a dead worker"));
    const held = await openRun(db, issueEvent(repo, 2, "h2", "Held by a silent worker"));
    // the keys they left, for far longer than the test waits
    await runner.redis.set(names.lease(left.runId), newLeaseToken(dead.id), "PX", 600_000);
    const silentToken = newLeaseToken(silent.id);
    await runner.redis.set(names.lease(held.runId), silentToken, "PX", 600_000);

    await runner.queue.moveRun(held.runId, { receivedAt: held.receivedAt });
    await runner.queue.moveRun(left.runId, { receivedAt: left.receivedAt });
    await waitFor("the Attempt of the Run the stopped worker left", async () => (await attemptsOf(db, left.runId)).find((a) => a.state === "Succeeded") ?? null, 60_000);
    expect(await attemptsOf(db, held.runId)).toEqual([]);
    expect(await runner.redis.get(names.lease(held.runId))).toBe(silentToken);
    await runner.redis.del(names.lease(held.runId));
  }, 120_000);
});
