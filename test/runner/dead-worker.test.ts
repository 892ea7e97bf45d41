import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMaintenanceWorker, type MaintenanceWorker } from "../../jobs/processors/maintenance";
import { bullConnection } from "../../jobs/queues";
import { watchOwnHost } from "../../lib/runner/own-host-recovery";
import { sweepOrphans } from "../../lib/runner/reconcile";
import { redisNames } from "../../lib/runner/redis-names";
import { listWorkers } from "../../lib/store/runs/worker-registry";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, enqueueMove, issueEvent, openRun, REDIS_URL, runningOn, settledState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";
import { killAgentsUnder, killChildren, spawnWorkerChild } from "./support/worker-child";

/**
 * A worker killed with SIGKILL (a real child process, registered and heartbeating): its
 * Attempt is closed as an InfraFailure because the registry says it is dead — not after the
 * sweep's second look — and the Run is retried by a live worker; a worker that starts again on
 * the same host closes its dead predecessor's Attempts at once, long before their lease expires.
 */

let pdb: PrivateDb;
let db: PrivateDb["db"];
const prefix = uniquePrefix("dead");
let world: SimWorld;
const children: ChildProcess[] = [];
let parent: RunnerUnderTest | null = null;
let maintenance: MaintenanceWorker | null = null;
const roots: string[] = [];
const newRoot = () => {
  const root = mkdtempSync(join(tmpdir(), "atelier-dead-ws-"));
  roots.push(root);
  return root;
};

beforeAll(async () => {
  pdb = await createPrivateDb("dead");
  db = pdb.db;
  world = await startSimWorld(db);
});
afterEach(async () => {
  killChildren(children);
  await maintenance?.close(true);
  maintenance = null;
  await parent?.close();
  parent = null;
  for (const root of roots.splice(0)) {
    killAgentsUnder(root);
    rmSync(root, { recursive: true, force: true });
  }
});
afterAll(async () => {
  await world?.close();
  await pdb?.drop();
});

async function spawnWorker(workerId: string, ttlMs: number, demoDelayMs: number) {
  const worker = await spawnWorkerChild({ workerId, dbUrl: pdb.url, prefix, world, workspaceRoot: newRoot(), leaseTtlMs: ttlMs, demoDelayMs });
  children.push(worker.child);
  return worker;
}

/** A Run whose Attempt is running on a worker process of its own when that worker is killed with SIGKILL. */
async function killedMidAttempt(workerId: string, ttlMs: number, issue: { repo: string; number: number; title: string }) {
  const { child, exited } = await spawnWorker(workerId, ttlMs, 1_000);
  const repo = await world.addRepo(issue.repo);
  const run = await openRun(db, issueEvent(repo, issue.number, "h1", issue.title));
  await enqueueMove(db, prefix, run.runId, run.receivedAt);
  const dead = await runningOn(db, run.runId, workerId);
  child.kill("SIGKILL");
  await exited;
  return { run, dead };
}

/** The sweep's deps on the live worker `live`, with a confirmation window (ten minutes) no test waits out. */
const sweepDeps = (live: RunnerUnderTest, ttlMs: number) =>
  ({ db, redis: live.redis, workQueue: live.queue, recheckCondition: async () => true, keyPrefix: `${prefix}:`, leaseTtlMs: ttlMs, confirmMs: 600_000 });

const settled = (runId: string, timeoutMs: number) => settledState(db, runId, timeoutMs);

/** The Attempt ids a worker said it recovered at start (test/runner/support/worker-entry.ts). */
const recoveredBy = (output: string): string[] => JSON.parse(/recovered=(\[.*?\])/.exec(output)?.[1] ?? "[]") as string[];

const failureMessage = async (attemptId: string) =>
  (await db.pool.query<{ failure_message: string }>(`SELECT failure_message FROM attempts WHERE id = $1`, [attemptId])).rows[0]!.failure_message;

describe("a dead worker's Attempts", () => {
  it("are closed by a live worker's sweep as soon as the registry says the worker is dead, and the Run is retried there", async () => {
    const TTL = 3_000;
    const { run, dead } = await killedMidAttempt("doomed", TTL, { repo: "sigkill", number: 31, title: "Survive a kill -9" });

    // the live worker: its attempts worker and its maintenance worker, whose sweep would wait ten
    // minutes before closing an Attempt the registry does not know dead
    // the survivor's own lease at the fixture's default: a busy machine may stall it past 3 s
    parent = await startRunner({ db, prefix, github: world.github, workspaceRoot: newRoot(), workerId: "survivor" });
    maintenance = await createMaintenanceWorker(bullConnection(REDIS_URL), sweepDeps(parent, TTL), { prefix, sweepEveryMs: 500 });

    expect(await settled(run.runId, 60_000)).toBe("Succeeded");
    const attempts = await attemptsOf(db, run.runId);
    expect(attempts.map((a) => [a.number, a.state, a.failure_kind, a.failure_category, a.worker_id])).toEqual([
      [1, "Failed", "InfraFailure", "lease_lost", "doomed"],
      [2, "Succeeded", null, null, "survivor"],
    ]);
    expect(attempts[0]!.id).toBe(dead.id);
    expect(await failureMessage(dead.id)).toContain("(doomed) stopped heartbeating");
    // the dead worker is still registered, and not alive: the registry says what happened
    expect((await listWorkers(db)).find((w) => w.id === "doomed")).toMatchObject({ stoppedAt: null });
  }, 180_000);

  it("are closed as soon as the registry says the worker died, even when a sweep first found it alive with its lease gone; no sweep waits", async () => {
    // the race the sweep meets on a busy machine: the lease has expired, the heartbeat is not
    // stale yet. A sweep that finds it so returns at once (it does not hold the maintenance job
    // for its confirmation window, here ten minutes); the next one closes the Attempt once the
    // registry says the worker is dead.
    const TTL = 3_000;
    const { run, dead } = await killedMidAttempt("half-dead", TTL, { repo: "half-dead", number: 34, title: "Die between two looks" });
    parent = await startRunner({ db, prefix, github: world.github, workspaceRoot: newRoot(), workerId: "looker", leaseTtlMs: TTL });
    const lease = redisNames(`${prefix}:`).lease(run.runId);
    await waitFor("the dead worker's lease to expire", async () => (await parent!.redis.exists(lease)) === 0, 30_000, 100);
    // the registry counts the worker alive (its heartbeat, as it stands, says so for an hour), and the Attempt is older than a TTL
    await db.pool.query(`UPDATE workers SET heartbeat_at = now() + interval '1 hour' WHERE id = 'half-dead'`);
    await db.pool.query(`UPDATE attempts SET started_at = now() - interval '1 minute' WHERE id = $1`, [dead.id]);
    expect(await sweepOrphans(sweepDeps(parent, TTL))).toEqual([]);
    expect(await sweepOrphans(sweepDeps(parent, TTL))).toEqual([]);
    expect((await attemptsOf(db, run.runId)).map((a) => a.state)).toEqual(["Running"]);
    // the worker's last heartbeat ages past the stale window: the registry says it is dead
    await db.pool.query(`UPDATE workers SET heartbeat_at = now() - interval '1 hour' WHERE id = 'half-dead'`);
    expect(await sweepOrphans(sweepDeps(parent, TTL))).toEqual([dead.id]);
    expect(await failureMessage(dead.id)).toContain("(half-dead) stopped heartbeating");
  }, 180_000);

  it("are closed at once by the next worker of the same host, before their lease would expire", async () => {
    // a lease that would hold the Run for a minute: only the restart's own-host recovery frees it sooner
    const TTL = 60_000;
    const { run, dead } = await killedMidAttempt("first-life", TTL, { repo: "restart", number: 32, title: "Survive a restart" });
    const diedAt = Date.now();

    const reborn = await spawnWorker("second-life", TTL, 5);
    // among them: another file's worker killed on this host is recovered by the same sweep
    expect(recoveredBy(reborn.output())).toContain(dead.id);
    expect(await settled(run.runId, 45_000)).toBe("Succeeded");
    // well inside the dead worker's lease TTL: nothing waited for it to expire
    expect(Date.now() - diedAt).toBeLessThan(TTL);
    expect((await attemptsOf(db, run.runId)).map((a) => [a.number, a.state, a.failure_category, a.worker_id])).toEqual([
      [1, "Failed", "lease_lost", "first-life"],
      [2, "Succeeded", null, "second-life"],
    ]);
    expect(await failureMessage(dead.id)).toContain("its process is gone");
    expect((await listWorkers(db)).find((w) => w.id === "first-life")?.stoppedAt).not.toBeNull();
  }, 180_000);

  it("are closed within seconds by a live worker of the same host that watches it, not restarted, before their lease would expire", async () => {
    const TTL = 60_000;
    const { child, exited } = await spawnWorker("watched", TTL, 1_000);
    const repo = await world.addRepo("watched");
    const run = await openRun(db, issueEvent(repo, 33, "h1", "Survive a kill -9 beside a live worker"));
    await enqueueMove(db, prefix, run.runId, run.receivedAt);
    const dead = await runningOn(db, run.runId, "watched");
    // the live worker of this host: its attempts worker, and its watch of the host's workers
    parent = await startRunner({ db, prefix, github: world.github, workspaceRoot: newRoot(), workerId: "watcher", leaseTtlMs: TTL });
    const deps = { db, redis: parent.redis, workQueue: parent.queue, recheckCondition: async () => true, keyPrefix: `${prefix}:`, leaseTtlMs: TTL };
    const watch = watchOwnHost(deps, { id: "watcher", host: hostname() }, 500, () => undefined);
    try {
      child.kill("SIGKILL");
      await exited;
      const diedAt = Date.now();
      expect(await settled(run.runId, 45_000)).toBe("Succeeded");
      expect(Date.now() - diedAt).toBeLessThan(TTL);
    } finally {
      watch.stop();
    }
    expect((await attemptsOf(db, run.runId)).map((a) => [a.number, a.state, a.failure_category, a.worker_id])).toEqual([
      [1, "Failed", "lease_lost", "watched"],
      [2, "Succeeded", null, "watcher"],
    ]);
    expect(await failureMessage(dead.id)).toContain("a live worker there closed the Attempt");
    expect((await listWorkers(db)).find((w) => w.id === "watched")?.stoppedAt).not.toBeNull();
  }, 180_000);
});
