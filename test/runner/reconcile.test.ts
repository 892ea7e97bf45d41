import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bullConnection } from "../../jobs/queues";
import { createMaintenanceWorker, type MaintenanceWorker } from "../../jobs/processors/maintenance";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis";
import { reconcile } from "../../lib/runner/reconcile";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { beginAttempt } from "../support/attempts";
import { AGENT_ENV, attemptsOf, claim, issueEvent, openRun, runState, startRunner, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * Invariant 1: Postgres is the truth, and the reconcile rebuilds from it. A FLUSHALL in
 * mid-flight loses every queue, job, lease and scheduler; the maintenance worker's scheduler
 * comes back, the reconcile re-enqueues every Run that should move, the live Attempts keep
 * their leases (their heartbeats set them again), and every Run ends with exactly one Attempt.
 * This file has a database and a Redis of its own: the reconcile acts on every Run it finds.
 */

const TTL = 1_500;
let pdb: PrivateDb;
let redisServer: PrivateRedis;
let world: SimWorld;
let workspaceRoot: string;
let runner: RunnerUnderTest;
let maintenance: MaintenanceWorker;

beforeAll(async () => {
  [pdb, redisServer] = await Promise.all([createPrivateDb("flush"), startPrivateRedis()]);
  world = await startSimWorld(pdb.db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-flush-ws-"));
});
afterAll(async () => {
  await maintenance?.close(true);
  await runner?.close();
  await world?.close();
  await pdb?.drop();
  await redisServer?.stop();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

it("after FLUSHALL in mid-flight the reconcile restores every open Run's job: nothing is lost, nothing runs twice", async () => {
  const db = pdb.db;
  const prefix = "flush";
  runner = await startRunner({
    db,
    prefix,
    github: world.github,
    workspaceRoot,
    leaseTtlMs: TTL,
    slots: 2,
    redisUrl: redisServer.url,
    // each Attempt takes about a second: two run while three wait when Redis is flushed
    agentEnv: { ...AGENT_ENV, ATELIER_DEMO_DELAY_MS: "400" },
  });
  const repo = await world.addRepo("flush");
  const runs = [];
  for (let n = 1; n <= 5; n++) runs.push(await openRun(db, issueEvent(repo, 30 + n, "h1", `Task ${n}`)));
  for (const r of runs) await runner.queue.moveRun(r.runId, { receivedAt: r.receivedAt });
  await waitFor("two running Attempts", async () => {
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM attempts WHERE state = 'Running'`);
    return rows[0].n === 2;
  });

  const admin = new Redis(redisServer.url);
  try {
    expect(await admin.flushall()).toBe("OK");
  } finally {
    await admin.quit();
  }

  maintenance = await createMaintenanceWorker(
    bullConnection(redisServer.url),
    { db, redis: runner.redis, workQueue: runner.queue, recheckCondition: async () => true, keyPrefix: `${prefix}:`, leaseTtlMs: TTL },
    { prefix, everyMs: 1_000 },
  );
  for (const r of runs) {
    await waitFor(`Run ${r.runId} to succeed`, async () => (await runState(db, r.runId)) === "Succeeded", 30_000);
  }
  for (const r of runs) {
    const attempts = await attemptsOf(db, r.runId);
    expect(attempts.map((a) => [a.number, a.state])).toEqual([[1, "Succeeded"]]);
  }
  const pulls = await world.app.installationOctokit(world.installationId).request("GET /repos/{owner}/{repo}/pulls", {
    owner: "demo-org",
    repo: repo.split("/")[1]!,
  });
  expect(pulls.data.map((p) => p.head.ref).sort()).toEqual([31, 32, 33, 34, 35].map((n) => `atelier/start-dev/${n}`));
});

it("gives the Events queued behind a Run that closed without continuing (its worker died) their turn", async () => {
  const db = pdb.db;
  const repo = await world.addRepo("stranded");
  const first = await openRun(db, issueEvent(repo, 41, "h1", "First"));
  const begun = await beginAttempt(db, first.runId, { token: "dead-worker", workerId: "dead" });
  if (begun.tag !== "Started") throw new Error("expected an Attempt");
  expect((await claim(db, issueEvent(repo, 41, "h2", "Second"))).tag).toBe("Queued");
  // the worker recorded the outcome, then died before continueWithNewest
  const usage = { durationMs: 1, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false };
  await finishAttempt(db, begun.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });

  const result = await reconcile({ db, workQueue: runner.queue, recheckCondition: async () => true, graceMs: 0 });
  expect(result.continued).toBe(1);
  const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM runs WHERE repo = $1 AND id <> $2`, [repo, first.runId]);
  expect(rows).toHaveLength(1);
  await waitFor("the queued Event's Run to succeed", async () => (await runState(db, rows[0]!.id)) === "Succeeded", 20_000);
  expect((await reconcile({ db, workQueue: runner.queue, recheckCondition: async () => true, graceMs: 0 })).continued).toBe(0);
});
