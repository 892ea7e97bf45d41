import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sweepOrphans } from "../../lib/runner/reconcile";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { demoChildAlive } from "../support/processes";
import { attemptsOf, enqueueMove, issueEvent, openRun, runningOn, runState, settledState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";
import { killAgentsUnder, killChildren, spawnWorkerChild, type WorkerChild } from "./support/worker-child";

/**
 * The worker as a real child process (node + tsx, the same wiring as the worker entry): killed
 * with SIGKILL in mid-Attempt, drained by SIGTERM, stopped by a second signal.
 */

const TTL = 1_500;
let pdb: PrivateDb;
let db: PrivateDb["db"];
const prefix = uniquePrefix("proc");
let world: SimWorld;
const children: ChildProcess[] = [];
let parent: RunnerUnderTest | null = null;
const childRoot = () => mkdtempSync(join(tmpdir(), "atelier-child-ws-"));

beforeAll(async () => {
  pdb = await createPrivateDb("proc");
  db = pdb.db;
  world = await startSimWorld(db);
});
afterEach(async () => {
  killChildren(children);
  await parent?.close();
  parent = null;
});
afterAll(async () => {
  await world?.close();
  await pdb?.drop();
});

async function spawnWorker(workerId: string, root: string, demoDelayMs = 5): Promise<WorkerChild> {
  const worker = await spawnWorkerChild({ workerId, dbUrl: pdb.url, prefix, world, workspaceRoot: root, leaseTtlMs: TTL, demoDelayMs });
  children.push(worker.child);
  return worker;
}

const startParent = (root: string) => startRunner({ db, prefix, github: world.github, workspaceRoot: root, workerId: "parent", leaseTtlMs: TTL });

const running = (runId: string, workerId: string) => runningOn(db, runId, workerId, 20_000);

const settled = (runId: string) => settledState(db, runId, 60_000);

describe("a worker process", () => {
  it("killed with SIGKILL in mid-Attempt: the lease expires, the sweep closes the Attempt as an InfraFailure, another Attempt succeeds, the dead one's late write is refused", async () => {
    const root = childRoot();
    try {
      // the dead worker's agent is slow (it prints a line every second); the next worker's is not
      const { child, exited } = await spawnWorker("doomed", root, 1_000);
      const repo = await world.addRepo("kill");
      const run = await openRun(db, issueEvent(repo, 21, "h1", "Survive a crash"));
      await enqueueMove(db, prefix, run.runId, run.receivedAt);
      const dead = await running(run.runId, "doomed");
      child.kill("SIGKILL");
      await exited;

      parent = await startParent(mkdtempSync(join(tmpdir(), "atelier-parent-ws-")));
      // nothing closes the Attempt while its lease could still be held
      expect(await attemptsOf(db, run.runId)).toHaveLength(1);
      const sweep = { db, redis: parent.redis, keyPrefix: `${prefix}:`, leaseTtlMs: TTL, workQueue: parent.queue, recheckCondition: async () => true };
      const expired = await waitFor("the sweep to close the orphan", async () => {
        const ids = await sweepOrphans(sweep);
        return ids.length ? ids : null;
      }, 15_000, 200);
      expect(expired).toEqual([dead.id]);
      expect(await sweepOrphans(sweep)).toEqual([]);

      expect(await settled(run.runId)).toBe("Succeeded");
      const attempts = await attemptsOf(db, run.runId);
      expect(attempts.map((a) => [a.number, a.state, a.failure_kind, a.failure_category, a.worker_id])).toEqual([
        [1, "Failed", "InfraFailure", "lease_lost", "doomed"],
        [2, "Succeeded", null, null, "parent"],
      ]);
      const pulls = await world.app.installationOctokit(world.installationId).request("GET /repos/{owner}/{repo}/pulls", {
        owner: "demo-org",
        repo: repo.split("/")[1]!,
      });
      expect(pulls.data.map((p) => p.head.ref)).toEqual(["atelier/start-dev/21"]);
      const late = finishAttempt(db, { id: dead.id, runId: run.runId, number: 1, leaseToken: dead.lease_token! }, {
        tag: "Succeeded",
        summary: "too late",
        usage: { durationMs: 1, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false },
        branch: null,
        pullRequestNumber: null,
        headSha: null,
      });
      await expect(late).rejects.toMatchObject({ token: "lease_lost", status: 409 });
    } finally {
      killAgentsUnder(root);
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  it("drains on SIGTERM: takes no new job, lets the running Attempt finish, exits 0; another worker takes what is left", async () => {
    const root = childRoot();
    try {
      const { child, exited, output } = await spawnWorker("drainer", root);
      const repo = await world.addRepo("drain");
      const first = await openRun(db, issueEvent(repo, 22, "h1", "Finish me [demo:sleep 1.5]"));
      await enqueueMove(db, prefix, first.runId, first.receivedAt);
      await running(first.runId, "drainer");
      child.kill("SIGTERM");
      await waitFor("the drain to begin", async () => output().includes("draining"));
      const second = await openRun(db, issueEvent(repo, 23, "h1", "Later"));
      await enqueueMove(db, prefix, second.runId, second.receivedAt);
      expect(await exited).toBe(0);
      expect(await runState(db, first.runId)).toBe("Succeeded");
      expect((await attemptsOf(db, first.runId)).map((a) => [a.state, a.worker_id])).toEqual([["Succeeded", "drainer"]]);
      expect(await attemptsOf(db, second.runId)).toEqual([]);

      parent = await startParent(mkdtempSync(join(tmpdir(), "atelier-parent-ws-")));
      expect(await settled(second.runId)).toBe("Succeeded");
      expect((await attemptsOf(db, second.runId)).map((a) => a.worker_id)).toEqual(["parent"]);
    } finally {
      killAgentsUnder(root);
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  it("stops at once on a second signal: the agent dies, nothing is written, and the Attempt is recovered as an InfraFailure", async () => {
    const root = childRoot();
    try {
      const { child, exited } = await spawnWorker("impatient", root, 1_000);
      const repo = await world.addRepo("stop");
      const run = await openRun(db, issueEvent(repo, 24, "h1", "Too slow [demo:spawn-child]"));
      await enqueueMove(db, prefix, run.runId, run.receivedAt);
      await running(run.runId, "impatient");
      await waitFor("the agent's child", async () => {
        const { rows } = await db.pool.query<{ text: string }>(`SELECT text FROM transcript_entries WHERE run_id = $1 AND text LIKE '%child pid%'`, [run.runId]);
        return rows[0] ? true : null;
      });
      expect(demoChildAlive(run.runId)).toBe(true);
      child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 200));
      child.kill("SIGTERM");
      const t0 = Date.now();
      expect(await exited).toBe(1);
      expect(Date.now() - t0).toBeLessThan(3_000);
      await waitFor("the agent's child gone", async () => !demoChildAlive(run.runId) || null, 10_000);
      expect((await attemptsOf(db, run.runId)).map((a) => a.state)).toEqual(["Running"]);

      parent = await startParent(mkdtempSync(join(tmpdir(), "atelier-parent-ws-")));
      const sweep = { db, redis: parent.redis, keyPrefix: `${prefix}:`, leaseTtlMs: TTL, workQueue: parent.queue, recheckCondition: async () => true };
      const attempt1 = `${run.runId}/agent/1`;
      await waitFor("the sweep", async () => (await sweepOrphans(sweep)).includes(attempt1), 15_000, 200);
      expect(await settled(run.runId)).toBe("Succeeded");
      expect((await attemptsOf(db, run.runId)).map((a) => [a.number, a.state, a.failure_category, a.worker_id])).toEqual([
        [1, "Failed", "lease_lost", "impatient"],
        [2, "Succeeded", null, "parent"],
      ]);
    } finally {
      killAgentsUnder(root);
      rmSync(root, { recursive: true, force: true });
    }
    // its waits add up to ~105 s on a busy machine (running 20 s, the child 10 s, the sweep 15 s, settled 60 s)
  }, 240_000);
});
