import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadRunDetail } from "../../lib/dashboard/run-detail";
import { sweepOrphans } from "../../lib/runner/reconcile";
import { openSession } from "../../lib/secrets/session-box";
import { loadSessionBlob } from "../../lib/store/runs/agent-sessions";
import { startFakeAnthropic, type AnthropicTurn, type FakeAnthropic } from "../support/fake-anthropic";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { removeScratch } from "../executor/git-fixture";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, AGENT_ENV, attemptsOf, enqueueMove, issueEvent, openRun, realClaudeAgent, runningOn, settledState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";
import { killAgentsUnder, killChildren, spawnWorkerChild } from "./support/worker-child";

/**
 * An interrupted agent keeps its work (ADR 0082, 0083): the real Claude Code CLI runs on a worker
 * process that is killed (SIGKILL), or drained (SIGTERM) past its drain's wait, in the middle of
 * its conversation with the scripted Messages API. The next Attempt runs on another worker, with
 * a workspace of its own, and resumes the session its predecessor kept in Postgres: the model
 * API's next request carries the earlier turns and the message that says it was interrupted;
 * the Run's page data says the first Attempt was interrupted and the second resumed it.
 */

const TTL = 1_500;
const KEY = "sk-ant-api03-interrupted-test-key-0123456789";
const INSTANCE_KEY = "instance-key-of-the-interrupted-session-test";
const SAVE_EVERY_MS = 300;
let pdb: PrivateDb;
let db: PrivateDb["db"];
const prefix = uniquePrefix("sessions");
let world: SimWorld;
let fake: FakeAnthropic | null = null;
const children: ChildProcess[] = [];
let other: RunnerUnderTest | null = null;
const roots: string[] = [];
const newRoot = (name: string) => {
  const root = mkdtempSync(join(tmpdir(), `atelier-${name}-ws-`));
  roots.push(root);
  return root;
};

beforeAll(async () => {
  pdb = await createPrivateDb("sessions");
  db = pdb.db;
  world = await startSimWorld(db);
});
afterEach(async () => {
  killChildren(children);
  await other?.close();
  other = null;
  for (const root of roots.splice(0)) {
    killAgentsUnder(root);
    // a killed worker leaves its Attempt's box (a tmpfs) mounted
    removeScratch(root);
  }
  await fake?.close();
  fake = null;
});
afterAll(async () => {
  await world?.close();
  await pdb?.drop();
});

/** The first Attempt's agent runs a tool, then waits on the model for ever; the resumed one finishes. */
const SCRIPT: AnthropicTurn[] = [
  { text: "First I take a note of where I am.", tools: [{ name: "Bash", input: { command: "echo progress-mark-one", description: "Note progress" } }] },
  { hang: true },
  { text: "I picked the task up where I left it; it is done." },
];

async function startFirstWorker(workerId: string, env: Record<string, string> = {}) {
  fake = await startFakeAnthropic(SCRIPT);
  const worker = await spawnWorkerChild({
    workerId,
    dbUrl: pdb.url,
    prefix,
    world,
    workspaceRoot: newRoot(workerId),
    leaseTtlMs: TTL,
    env: { CLAUDE_API_URL: fake.url, ANTHROPIC_API_KEY: KEY, ATELIER_SECRET_KEY: INSTANCE_KEY, SESSION_SAVE_EVERY_MS: String(SAVE_EVERY_MS), ...env },
  });
  children.push(worker.child);
  return worker;
}

/** Another worker (this process, a workspace of its own), with the same roster and instance key. */
const startOtherWorker = async (workerId: string) =>
  (other = await startRunner({
    db,
    prefix,
    github: world.github,
    workspaceRoot: newRoot(workerId),
    workerId,
    // its own lease at the fixture's default: a busy machine may stall it past 1.5 s
    roster: agents({ claude: realClaudeAgent(fake!.url) }),
    agentEnv: { ...AGENT_ENV, ANTHROPIC_API_KEY: KEY },
    sessionKey: INSTANCE_KEY,
    sessionSaveEveryMs: SAVE_EVERY_MS,
  }));

/** The Run's kept session, opened as a worker opens it: its files' text once it holds the tool's output. */
const sessionHolds = (runId: string, text: string) =>
  waitFor(
    "the agent's session, with its tool's result, kept in Postgres",
    async () => {
      const kept = await loadSessionBlob(db, runId);
      const plain = kept && openSession(kept.blob, INSTANCE_KEY, runId);
      return plain && gunzipSync(plain).toString("utf8").includes(text) ? kept.sessionId : null;
    },
    60_000,
    200,
  );

async function openRunOfClaude(name: string, number: number) {
  const repo = await world.addRepo(name);
  const run = await openRun(db, issueEvent(repo, number, "h1", "Finish the task, noting progress.", { agent: "claude" }));
  await enqueueMove(db, prefix, run.runId, run.receivedAt);
  return run;
}

/** What the resumed Attempt's first request to the model carried, and what the Run's page says. */
async function expectResumed(runId: string, session: string, firstWorker: string, secondWorker: string, interruption: string) {
  expect(await settledState(db, runId, 120_000)).toBe("Succeeded");
  const attempts = await attemptsOf(db, runId);
  expect(attempts.map((a) => [a.number, a.state, a.failure_category, a.worker_id])).toEqual([
    [1, "Failed", "lease_lost", firstWorker],
    [2, "Succeeded", null, secondWorker],
  ]);
  const conversation = JSON.stringify(fake!.loopRequests().at(-1)!.body);
  // the earlier turns, sent again from the kept session: the task, the agent's words, its tool's output
  expect(conversation).toContain("Finish the task, noting progress.");
  expect(conversation).toContain("First I take a note of where I am.");
  expect(conversation).toContain("progress-mark-one");
  expect(conversation).toContain("Your previous session on this task was interrupted before it finished");

  const detail = await loadRunDetail(db, runId);
  const [first, second] = detail.attempts;
  expect(first).toMatchObject({ interrupted: true, sessionId: session, resumedSession: null });
  expect(first!.failureMessage).toContain(interruption);
  expect(second).toMatchObject({ interrupted: false, resumedSession: session, resumedInterrupted: true });
  const { rows } = await db.pool.query<{ text: string }>(`SELECT text FROM transcript_entries WHERE attempt_id = $1 AND stream = 'system'`, [`${runId}/agent/2`]);
  expect(rows.map((r) => r.text)).toContain(`resuming the agent's session ${session} (the previous Attempt was interrupted)`);
}

describe("an interrupted Attempt of the real claude CLI", () => {
  it("killed with SIGKILL mid-conversation: the next Attempt, on another worker, resumes its kept session", async () => {
    const { child, exited } = await startFirstWorker("doomed");
    const run = await openRunOfClaude("killed", 41);
    await runningOn(db, run.runId, "doomed", 60_000);
    const session = await sessionHolds(run.runId, "progress-mark-one");
    await waitFor("the agent to wait on its second turn", async () => fake!.loopRequests().length >= 2 || null, 60_000);
    child.kill("SIGKILL");
    await exited;

    await startOtherWorker("survivor");
    const sweep = { db, redis: other!.redis, keyPrefix: `${prefix}:`, leaseTtlMs: TTL, workQueue: other!.queue, recheckCondition: async () => true };
    await waitFor("the sweep to close the dead worker's Attempt", async () => (await sweepOrphans(sweep)).length > 0 || null, 30_000, 200);
    await expectResumed(run.runId, session, "doomed", "survivor", "it died");
  }, 240_000);

  it("drained by SIGTERM past the drain's wait: handed over with its session, resumed on another worker", async () => {
    const { child, exited, output } = await startFirstWorker("deployed", { DRAIN_TIMEOUT_MS: "1000" });
    const run = await openRunOfClaude("drained", 42);
    await runningOn(db, run.runId, "deployed", 60_000);
    const session = await sessionHolds(run.runId, "progress-mark-one");
    await waitFor("the agent to wait on its second turn", async () => fake!.loopRequests().length >= 2 || null, 60_000);
    child.kill("SIGTERM");
    // the hand-over closes the Attempt itself, and the worker exits cleanly: nothing is left to a sweep
    expect(await exited, output()).toBe(0);
    expect(output()).toContain("handed over the Attempts that outlived the drain");
    expect((await attemptsOf(db, run.runId)).map((a) => [a.state, a.failure_category])).toEqual([["Failed", "lease_lost"]]);

    await startOtherWorker("successor");
    await expectResumed(run.runId, session, "deployed", "successor", "was drained");
  }, 240_000);
});
