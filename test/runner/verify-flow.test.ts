import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { itemKey } from "../../lib/engine/ids";
import type { VerifySpec } from "../../lib/executor/verify-spec";
import { NO_ENVIRONMENT, type EnvironmentSpec } from "../../lib/executor/environment/environment-spec";
import { loadRunDetail } from "../../lib/dashboard/run-detail";
import { checkRunName } from "../../lib/mirror/check-run-view";
import { syncRunMirror, type MirrorDeps } from "../../lib/mirror/sync-run";
import { commentsOn, latestCheckRun } from "../mirror/support";
import { startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, realClaudeAgent, AGENT_ENV, attemptsOf, issueEvent, openRun, settledState, startRunner, uniquePrefix, type RunnerUnderTest } from "./support/runner-fixture";

/** A Loop's environment that declares only `verify`. */
const environmentOf = (v: VerifySpec): EnvironmentSpec => ({ ...NO_ENVIRONMENT, verify: v.command, onVerifyFailure: v.onFailure, maxVerifyRounds: v.maxRounds });

/**
 * Atelier checks the agent's work, through the whole runner and the GitHub simulator: an agent
 * that says it is done but breaks a test gets a draft pull request that says verify failed, a
 * failing check run and a comment that says so; with `on_verify_failure: retry` the real Claude
 * Code CLI (against a scripted Messages API) gets verify's failure as its next message and its
 * second round passes.
 */

const db = testDb();
const prefix = uniquePrefix("verify-flow");
let world: SimWorld;
let fake: FakeAnthropic;
let runner: RunnerUnderTest;
let workspaceRoot: string;
let mirror: MirrorDeps;

/** The repository's test: fails while any file of atelier-demo/ says BROKEN. */
const FILES = {
  "check.sh": `#!/bin/sh
echo "running the tests"
if grep -rq BROKEN atelier-demo 2>/dev/null; then grep -r BROKEN atelier-demo; echo "FAILED: a file says BROKEN"; exit 1; fi
echo "all tests passed"
`,
};
const BREAK = "mkdir -p atelier-demo && echo BROKEN > atelier-demo/widget.md && git add -A && git commit -q -m 'Add the widget' && echo committed";
const FIX = "echo 'a widget' > atelier-demo/widget.md && git commit -q -am 'Fix the widget' && echo committed";

beforeAll(async () => {
  world = await startSimWorld(db);
  fake = await startFakeAnthropic([
    { text: "I will add the widget.", tools: [{ name: "Bash", input: { command: BREAK, description: "Add the widget" } }] },
    { text: "Done: the widget is added." },
    { text: "Verify failed; I will fix the widget.", tools: [{ name: "Bash", input: { command: FIX, description: "Fix the widget" } }] },
    { text: "Fixed the widget; the tests pass now." },
  ]);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-verify-flow-ws-"));
  runner = await startRunner({
    db,
    prefix,
    github: world.github,
    workspaceRoot,
    roster: agents({ claude: realClaudeAgent(fake.url) }),
    agentEnv: { ...AGENT_ENV, ANTHROPIC_API_KEY: "sk-ant-api03-verify-flow-key-0123456789" },
  });
  mirror = { db, github: async (id) => world.app.installationOctokit(id), publicUrl: "http://atelier.test" };
});
afterAll(async () => {
  await runner?.close();
  await fake?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

/** An issue in the simulator (and its Item in Postgres), and a Run of it whose Loop declares `verify`. */
async function runWithVerify(repo: string, prompt: string, verify: VerifySpec, agent = "demo"): Promise<{ runId: string; number: number }> {
  const issue = world.sim.createIssue({ repo, title: "Add a widget", login: "octo-admin" });
  await db.pool.query(
    `INSERT INTO items (key, repo, number, kind, state, title, head_sha, projection, content_hash) VALUES ($1, $2, $3, 'issue', 'open', 'Add a widget', NULL, '{}', 'x')`,
    [itemKey(repo, issue.number), repo, issue.number],
  );
  const event = issueEvent(repo, issue.number, "h1", prompt, { agent });
  const run = await openRun(db, { ...event, submission: { ...event.submission, environment: environmentOf(verify) } });
  await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
  return { runId: run.runId, number: issue.number };
}

async function pullOf(repo: string) {
  const [owner, name] = repo.split("/") as [string, string];
  const octokit = world.app.installationOctokit(world.installationId);
  const pulls = (await octokit.request("GET /repos/{owner}/{repo}/pulls", { owner, repo: name, state: "all" })).data;
  expect(pulls).toHaveLength(1);
  return pulls[0]!;
}

describe("verify through the runner", () => {
  it("an agent that says it is done but broke a test: verify failed on the Attempt, the Run page, a draft pull request, the check run and the comment", async () => {
    const repo = await world.addRepo("verifydraft", FILES);
    const { runId, number } = await runWithVerify(repo, "Add a widget\n\n[demo:break-test]", { command: "sh check.sh", onFailure: "draft", maxRounds: 1 });
    expect(await settledState(db, runId, 60_000)).toBe("Succeeded");

    const [attempt] = await attemptsOf(db, runId);
    const { rows } = await db.pool.query<{ verify: Record<string, unknown> }>(`SELECT verify FROM attempts WHERE id = $1`, [attempt!.id]);
    expect(rows[0]!.verify).toMatchObject({ passed: false, exitCode: 1, command: "sh check.sh", rounds: 1 });
    expect(String(rows[0]!.verify.tail)).toContain("FAILED: a file says BROKEN");

    const detail = await loadRunDetail(db, runId);
    expect(detail.verify).toBe("failed");
    expect(detail.attempts[0]!.verify).toMatchObject({ passed: false, exitCode: 1 });

    const pull = await pullOf(repo);
    expect(pull.draft).toBe(true);
    expect(pull.body).toContain("**Verify failed: this pull request is a draft.** Verify `sh check.sh` failed with exit code 1");
    expect(pull.body).toContain("FAILED: a file says BROKEN");

    await syncRunMirror(mirror, runId);
    const check = latestCheckRun(world.sim, pull.head.sha, checkRunName("start-dev"));
    expect(check).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(check.output.title).toBe("Verify failed");
    expect(check.output.summary).toContain("The agent succeeded and verify failed.");
    expect(check.output.summary).toContain("FAILED: a file says BROKEN");
    const comments = commentsOn(world.sim, repo, number);
    expect(comments.at(-1)!.body).toContain("**Succeeded, verify failed**");
    expect(comments.at(-1)!.body).toContain("FAILED: a file says BROKEN");

    // the next Run on the Item fixes the work: the same pull request, verify passed, ready for review
    const event = issueEvent(repo, number, "h2", "Add a widget", {});
    const next = await openRun(db, { ...event, submission: { ...event.submission, environment: environmentOf({ command: "sh check.sh", onFailure: "draft", maxRounds: 1 }) } });
    await runner.queue.moveRun(next.runId, { receivedAt: next.receivedAt });
    expect(await settledState(db, next.runId, 60_000)).toBe("Succeeded");
    const updated = await pullOf(repo);
    expect(updated.number).toBe(pull.number);
    expect(updated.draft).toBe(false);
    expect(updated.body).toContain("Verify `sh check.sh` passed");
  }, 90_000);

  it("on_verify_failure: retry — the real claude CLI gets verify's failure as its next message, and its second round passes", async () => {
    const repo = await world.addRepo("verifyretry", FILES);
    const { runId } = await runWithVerify(repo, "Add a widget in atelier-demo/widget.md and commit it.", { command: "sh check.sh", onFailure: "retry", maxRounds: 1 }, "claude");
    expect(await settledState(db, runId, 110_000)).toBe("Succeeded");

    const loop = fake.loopRequests();
    expect(loop.length).toBe(4);
    // the resumed session's first request carries verify's failure as the user's message
    expect(JSON.stringify(loop[2]!.body)).toContain("Atelier checked your work by running the repository's verify command");
    expect(JSON.stringify(loop[2]!.body)).toContain("FAILED: a file says BROKEN");

    const { rows } = await db.pool.query<{ verify: Record<string, unknown>; summary: string }>(`SELECT verify, summary FROM attempts WHERE run_id = $1`, [runId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.verify).toMatchObject({ passed: true, exitCode: 0, rounds: 2 });
    expect(rows[0]!.summary).toBe("Fixed the widget; the tests pass now.");
    expect((await loadRunDetail(db, runId)).verify).toBe("passed");

    const pull = await pullOf(repo);
    expect(pull.draft).toBe(false);
    expect(pull.body).toContain("Verify `sh check.sh` passed");
    expect(pull.body).toContain("(after 1 resumed round of the agent)");
  }, 120_000);
});
