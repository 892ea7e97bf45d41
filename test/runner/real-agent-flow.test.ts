import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveRun, type OperatorDeps } from "../../lib/runner/operator";
import { startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic";
import { testDb } from "../support/db";
import { COMMIT_HELLO } from "../executor/adapters/real-cli";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, realClaudeAgent, AGENT_ENV, attemptsOf, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * The real Claude Code CLI through the whole runner: an approved Run in the GitHub simulator,
 * the agent in its sandbox against a scripted Messages API on a loopback port its roster
 * allows, its commit pushed, the pull request opened with its own answer, the Attempt's cost
 * and tokens the ones it reported.
 */

const db = testDb();
const prefix = uniquePrefix("real-agent");
let world: SimWorld;
let fake: FakeAnthropic;
/** A model API that times out once, then answers; one that knows only claude-sonnet-4-5. */
let flaky: FakeAnthropic;
let strict: FakeAnthropic;
let runner: RunnerUnderTest;
let workspaceRoot: string;
let ops: OperatorDeps;

beforeAll(async () => {
  world = await startSimWorld(db);
  fake = await startFakeAnthropic([
    { text: "I will add hello.txt.", tools: [{ name: "Bash", input: { command: COMMIT_HELLO, description: "Write and commit hello.txt" } }] },
    { text: "Added hello.txt and committed it; the greeting is in place." },
  ]);
  flaky = await startFakeAnthropic([{ error: 504 }, { text: "Answered after the timeout." }]);
  strict = await startFakeAnthropic([{ text: "never" }], { knownModels: ["claude-sonnet-4-5"] });
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-real-agent-ws-"));
  runner = await startRunner({
    db,
    prefix,
    github: world.github,
    workspaceRoot,
    roster: agents({
      claude: realClaudeAgent(fake.url),
      // the CLI's own retries off: the gateway's answer reaches the Attempt as it is
      flaky: { ...realClaudeAgent(flaky.url), env: { CLAUDE_CODE_MAX_RETRIES: "0" } },
      unknown: { ...realClaudeAgent(strict.url), model: "claude-nope", env: { CLAUDE_CODE_MAX_RETRIES: "0" } },
    }),
    agentEnv: { ...AGENT_ENV, ANTHROPIC_API_KEY: "sk-ant-api03-flow-test-key-0123456789" },
  });
  ops = { db, redis: runner.redis, workQueue: runner.queue, recheckCondition: async () => true, keyPrefix: `${prefix}:`, roster: runner.host.context.config.roster };
});
afterAll(async () => {
  await runner?.close();
  await fake?.close();
  await flaky?.close();
  await strict?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

describe("a Run of the real claude CLI", () => {
  it("waits for approval, then the agent commits in its sandbox and the pull request carries its answer and exact usage", async () => {
    const repo = await world.addRepo("realclaude");
    const run = await openRun(db, issueEvent(repo, 31, "h1", "Add hello.txt and commit it.", { approvalRequired: true, agent: "claude" }));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await waitFor("the Run to wait for approval", async () => (await runState(db, run.runId)) === "Waiting" || null);
    await approveRun(ops, run.runId, "octo-admin");
    const state = await waitFor("the Run to settle", async () => {
      const s = await runState(db, run.runId);
      return ["Succeeded", "Failed", "Canceled"].includes(s) ? s : null;
    }, 90_000);
    const attempts = await attemptsOf(db, run.runId);
    expect(state, JSON.stringify(attempts)).toBe("Succeeded");

    const [owner, name] = repo.split("/") as [string, string];
    const octokit = world.app.installationOctokit(world.installationId);
    const pulls = (await octokit.request("GET /repos/{owner}/{repo}/pulls", { owner, repo: name, state: "all" })).data;
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.body).toContain("Added hello.txt and committed it; the greeting is in place.");
    const file = await octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { owner, repo: name, path: "hello.txt", ref: pulls[0]!.head.ref });
    expect(Buffer.from((file.data as { content: string }).content, "base64").toString("utf8")).toBe("hello\n");

    const { rows } = await db.pool.query<{ cost_usd: string | null; cost_estimated: boolean; cost_exact: boolean; tokens_in: string | null; summary: string | null }>(
      `SELECT cost_usd::text, cost_estimated, cost_exact, tokens_in::text, summary FROM attempts WHERE run_id = $1`,
      [run.runId],
    );
    // the usage the gateway read, priced from the roster
    expect(rows[0]).toMatchObject({ cost_estimated: false, cost_exact: true, summary: "Added hello.txt and committed it; the greeting is in place." });
    for (const r of fake.requests) expect(r.headers["x-api-key"]).toBe("sk-ant-api03-flow-test-key-0123456789");
    expect(Number(rows[0]!.cost_usd)).toBeGreaterThan(0);
    expect(Number(rows[0]!.tokens_in)).toBeGreaterThan(0);
  }, 120_000);
});

describe("a failure of the real claude CLI is retried exactly when it is reported retryable", () => {
  const failures = async (runId: string) =>
    (
      await db.pool.query<{ number: number; state: string; failure_kind: string | null; failure_category: string | null; retryable: boolean | null }>(
        `SELECT number, state::text, failure_kind, failure_category, retryable FROM attempts WHERE run_id = $1 ORDER BY number`,
        [runId],
      )
    ).rows;
  const settled = (runId: string) =>
    waitFor("the Run to settle", async () => {
      const s = await runState(db, runId);
      return ["Succeeded", "Failed", "Canceled"].includes(s) ? s : null;
    }, 90_000);

  it("a gateway timeout (504) is retryable, and Atelier retries it: the next Attempt succeeds", async () => {
    const repo = await world.addRepo("realflaky");
    const run = await openRun(db, issueEvent(repo, 32, "h1", "Say something.", { agent: "flaky" }));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    const state = await settled(run.runId);
    const attempts = await failures(run.runId);
    expect(state, JSON.stringify(attempts)).toBe("Succeeded");
    expect(attempts.map((a) => [a.number, a.state, a.failure_category, a.retryable])).toEqual([
      [1, "Failed", "gateway_timeout", true],
      [2, "Succeeded", null, null],
    ]);
  }, 180_000);

  it("an unknown model is not retryable, and Atelier does not retry it: the Run fails after one Attempt, saying invalid_model", async () => {
    const repo = await world.addRepo("realunknown");
    const run = await openRun(db, issueEvent(repo, 33, "h1", "Say something.", { agent: "unknown" }));
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    expect(await settled(run.runId)).toBe("Failed");
    const attempts = await failures(run.runId);
    expect(attempts.map((a) => [a.number, a.failure_kind, a.failure_category, a.retryable])).toEqual([[1, "AgentFailure", "invalid_model", false]]);
    expect(strict.loopRequests().every((r) => (r.body as { model: string }).model === "claude-nope")).toBe(true);
  }, 180_000);
});
