import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerLog } from "../../lib/runner/runner-deps";
import { createDb, type Db } from "../../lib/store/db";
import { startPrivateCluster, type PrivateCluster } from "../support/private-cluster";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, attemptsOf, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * Outcomes survive a database outage: Postgres (a cluster of the test's own) is stopped while
 * the agent runs; the agent finishes meanwhile; the worker holds its outcome (and its lease)
 * and writes it once Postgres is back 20 s later. The Run succeeds on its first Attempt: the
 * work is not run again.
 */

const OUTAGE_MS = 20_000;
let cluster: PrivateCluster;
let db: Db;
let world: SimWorld;
let runner: RunnerUnderTest;
let workspaceRoot: string;
const held: string[] = [];
const log: RunnerLog = {
  info: () => undefined,
  warn: (obj: object, msg?: string) => {
    if (msg?.includes("holding")) held.push(msg);
  },
  error: () => undefined,
};

beforeAll(async () => {
  cluster = await startPrivateCluster();
  db = createDb(cluster.url, 6);
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-outage-ws-"));
  runner = await startRunner({
    db,
    prefix: uniquePrefix("outage"),
    github: world.github,
    workspaceRoot,
    leaseTtlMs: 3_000,
    roster: agents({ patient: { maxAttemptMinutes: 5 } }),
    log,
  });
}, 120_000);
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db?.close();
  cluster?.destroy();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

describe("an Attempt that finishes while Postgres is away", () => {
  it("holds its outcome and writes it once Postgres is back 20 s later: Succeeded, not run again", async () => {
    const repo = await world.addRepo("outage");
    const run = await openRun(db, issueEvent(repo, 51, "h1", "Finish during the outage [demo:sleep 4]", { agent: "patient" }));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await waitFor("the Attempt to run", async () => (await attemptsOf(db, run.runId)).find((a) => a.state === "Running"), 60_000);
    // the agent itself is at work (its 4 s sleep ahead) before Postgres goes away
    await waitFor("the agent to start writing", async () => {
      const { rows } = await db.pool.query(`SELECT 1 FROM transcript_entries WHERE run_id = $1 AND text LIKE 'demo agent: writing%'`, [run.runId]);
      return rows.length > 0 || null;
    }, 60_000, 100);

    cluster.stop();
    try {
      // the agent finishes, and the worker meets the outage when it records what it did
      await waitFor("the worker to hold the outcome", async () => held.length > 0 || null, 60_000, 200);
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
    } finally {
      cluster.start();
    }

    const state = await waitFor("the Run to settle", async () => {
      const s = await runState(db, run.runId).catch(() => null);
      return s && ["Succeeded", "Failed", "Canceled"].includes(s) ? s : null;
    }, 60_000, 250);
    expect(state).toBe("Succeeded");
    expect((await attemptsOf(db, run.runId)).map((a) => [a.number, a.state])).toEqual([[1, "Succeeded"]]);
    const { rows } = await db.pool.query<{ pull_request_number: number | null }>(`SELECT pull_request_number FROM runs WHERE id = $1`, [run.runId]);
    expect(rows[0]!.pull_request_number).not.toBeNull();
  }, 240_000);
});
