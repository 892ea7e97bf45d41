import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerLog } from "../../lib/runner/runner-deps";
import { createDb, type Db } from "../../lib/store/db";
import { startPrivateCluster, type PrivateCluster } from "../support/private-cluster";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * A Run's job that meets a Postgres outage before its Attempt begins (Postgres restarted or
 * away: the chaos run's postgres-restart and postgres-down-20s) is moved again once Postgres
 * is back, by the same worker, without waiting for a reconcile: the job does not just fail.
 */

let cluster: PrivateCluster;
let db: Db;
let world: SimWorld;
let runner: RunnerUnderTest;
let workspaceRoot: string;
const met: string[] = [];
const log: RunnerLog = {
  info: () => undefined,
  warn: (_obj: object, msg?: string) => void (msg && met.push(msg)),
  error: (_obj: object, msg?: string) => void (msg && met.push(msg)),
};

beforeAll(async () => {
  cluster = await startPrivateCluster();
  db = createDb(cluster.url, 4);
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-move-outage-ws-"));
  runner = await startRunner({ db, prefix: uniquePrefix("move-outage"), github: world.github, workspaceRoot, leaseTtlMs: 3_000, log });
  runner.worker.on("failed", (_job, err) => met.push(`job failed: ${err.message}`));
}, 120_000);
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db?.close();
  cluster?.destroy();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

describe("a Run's job that meets a Postgres outage", () => {
  it("is moved again once Postgres is back: the Run succeeds without a reconcile", async () => {
    const repo = await world.addRepo("move-outage");
    const run = await openRun(db, issueEvent(repo, 71, "h1", "Start after the outage"));
    cluster.stop();
    try {
      // no `opened`: the job reads the Run, and meets the outage
      await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
      await waitFor("the job to meet the outage", async () => met.length > 0 || null, 60_000, 100);
    } finally {
      cluster.start();
    }
    const state = await waitFor("the Run to settle", async () => {
      const s = await runState(db, run.runId).catch(() => null);
      return s && ["Succeeded", "Failed", "Canceled"].includes(s) ? s : null;
    }, 90_000, 250);
    expect(state).toBe("Succeeded");
    expect((await attemptsOf(db, run.runId)).map((a) => a.state)).toEqual(["Succeeded"]);
    expect(met.filter((m) => m.startsWith("job failed"))).toEqual([]);
    const { rows } = await db.pool.query<{ engine_failures: number }>(`SELECT engine_failures FROM runs WHERE id = $1`, [run.runId]);
    expect(rows[0]!.engine_failures).toBe(0);
  }, 240_000);
});
