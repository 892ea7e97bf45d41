import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisNames } from "../../lib/runner/redis-names";
import { testDb } from "../support/db";
import { pidsWithArgument } from "../support/processes";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, issueEvent, openRun, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * Execution is fenced, not only writes (invariant 7): on a live worker, an Attempt whose lease
 * someone else took has its agent stopped — the agent, its sandbox and the children it
 * started — and writes no outcome.
 */

const db = testDb();
const prefix = uniquePrefix("fence");
const TTL = 3_000;
let world: SimWorld;
let workspaceRoot: string;
let runner: RunnerUnderTest;

beforeAll(async () => {
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-fence-ws-"));
  // the agent prints a line a second: it would run for a long while
  runner = await startRunner({ db, prefix, github: world.github, workspaceRoot, leaseTtlMs: TTL, agentEnv: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATELIER_DEMO_DELAY_MS: "1000" } });
});
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

/**
 * The Attempt's processes as the host sees them: its named child, and every process whose
 * environment carries its id (the agent and what it started) or whose command line names this
 * workspace (the sandbox).
 */
function agentProcesses(attemptId: string): number[] {
  const pids = new Set([...pidsWithArgument(`atelier-demo-child:${attemptId}`), ...pidsWithArgument(workspaceRoot)]);
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`ATELIER_ATTEMPT_ID=${attemptId}`)) pids.add(Number(pid));
    } catch {
      // gone, or not ours
    }
  }
  return [...pids];
}

describe("an Attempt that lost its lease on a live worker", () => {
  it("has no agent process alive 5 s after its lease was taken, and records nothing", async () => {
    const repo = await world.addRepo("fence");
    const run = await openRun(db, issueEvent(repo, 41, "h1", "Run long [demo:spawn-child]"));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    const attempt = await waitFor("the Attempt", async () => (await attemptsOf(db, run.runId)).find((a) => a.state === "Running"), 30_000);
    await waitFor("the agent's child", async () => pidsWithArgument(`atelier-demo-child:${attempt.id}`).length > 0 || null, 30_000);
    expect(agentProcesses(attempt.id).length).toBeGreaterThan(1);

    // someone else holds the Run's lease now (what a worker that took it over would have written)
    expect(await runner.redis.set(redisNames(`${prefix}:`).lease(run.runId), "another-worker", "PX", 60_000, "XX")).toBe("OK");
    await new Promise((r) => setTimeout(r, 5_000));
    expect(agentProcesses(attempt.id)).toEqual([]);

    // the fenced worker wrote no outcome: the Attempt is left to whoever holds the lease (or the sweep)
    expect((await attemptsOf(db, run.runId)).map((a) => [a.number, a.state])).toEqual([[1, "Running"]]);
    await waitFor("the job to end as held", async () => runner.outcomes.find((o) => o.tag === "Held") ?? null, 30_000);
  }, 120_000);
});
