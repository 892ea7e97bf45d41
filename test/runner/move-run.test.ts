import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoChildAlive } from "../support/processes";
import { publishCancel, publishIntervention } from "../../lib/runner/control-channel";
import { approveRun, cancelRun, editAndRetryRun, intervene, retryRun, type OperatorDeps } from "../../lib/runner/operator";
import { redisNames } from "../../lib/runner/redis-names";
import { TRANSCRIPT_CHANNEL } from "../../lib/store/runs/transcript-lines";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { randomBytes } from "node:crypto";
import { applyInstallationWebhook } from "../../lib/github/installation-sync";
import {
  agents,
  attemptsOf,
  claim,
  issueEvent,
  withFlakyTokens,
  openRun,
  runState,
  startRunner,
  uniquePrefix,
  waitFor,
  type RunnerUnderTest,
} from "./support/runner-fixture";

const db = testDb();
const prefix = uniquePrefix("move");
let world: SimWorld;
let workspaceRoot: string;
let runner: RunnerUnderTest;
let github: ReturnType<typeof withFlakyTokens>;
let recheck = true;
let ops: OperatorDeps;
/** The repository the `pinned` agent's allow: lists, created by its test. */
const PINNED = `pinned-${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-runner-ws-"));
  runner = await startRunner({
    db,
    prefix,
    github: (github = withFlakyTokens(world.github)),
    workspaceRoot,
    roster: agents({ talker: { intervene: true }, fenced: { allow: ["someone-else"] }, pinned: { allow: [`demo-org/${PINNED}`] } }),
    recheckCondition: async () => recheck,
  });
  ops = { db, redis: runner.redis, workQueue: runner.queue, recheckCondition: async () => recheck, keyPrefix: `${prefix}:`, roster: runner.host.context.config.roster, apiHost: async () => github.apiHost };
});
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

/** The simulator's REST API, as the installation. */
const gh = (repo: string) => {
  const [owner, name] = repo.split("/") as [string, string];
  const octokit = world.app.installationOctokit(world.installationId);
  return {
    pulls: async () => (await octokit.request("GET /repos/{owner}/{repo}/pulls", { owner, repo: name, state: "all" })).data,
    file: async (path: string, ref: string) => {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { owner, repo: name, path, ref });
      return Buffer.from((data as { content: string }).content, "base64").toString("utf8");
    },
  };
};

async function start(repo: string, number: number, prompt: string, opts: { approvalRequired?: boolean; agent?: string; hash?: string } = {}) {
  const run = await openRun(db, issueEvent(repo, number, opts.hash ?? "h1", prompt, opts));
  await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
  return run.runId;
}

const settled = (runId: string, states = ["Succeeded", "Failed", "Canceled"]) =>
  waitFor(`Run ${runId} to settle`, async () => {
    const s = await runState(db, runId);
    return states.includes(s) ? s : null;
  });

const transcript = async (runId: string) =>
  (await db.pool.query<{ stream: string; text: string }>(`SELECT stream, text FROM transcript_entries WHERE run_id = $1 ORDER BY id`, [runId])).rows;

describe("moveRun end to end (GitHub simulator, real git, demo agent)", () => {
  it("runs the demo agent, pushes its branch, opens the pull request, records Succeeded and streams the transcript", async () => {
    const listener = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await listener.connect();
    const notified: string[] = [];
    listener.on("notification", (n) => notified.push(n.payload ?? ""));
    await listener.query(`LISTEN ${TRANSCRIPT_CHANNEL}`);
    try {
      const repo = await world.addRepo("e2e");
      const runId = await start(repo, 7, "Add a greeting\n\nSay hello.");
      expect(await settled(runId)).toBe("Succeeded");
      const branch = "atelier/start-dev/7";
      expect(await gh(repo).file("atelier-demo/7.md", branch)).toContain("Add a greeting");

      const pulls = await gh(repo).pulls();
      expect(pulls).toHaveLength(1);
      const pr = pulls[0]!;
      expect(pr).toMatchObject({ state: "open", title: "Atelier demo: Add a greeting", head: { ref: branch }, base: { ref: "main" } });
      expect(pr.body).toContain(`Run \`${runId}\``);
      const { rows } = await db.pool.query(`SELECT state, branch, pull_request_number, head_sha FROM runs WHERE id = $1`, [runId]);
      expect(rows[0]).toEqual({ state: "Succeeded", branch, pull_request_number: pr.number, head_sha: pr.head.sha });

      const [attempt] = await attemptsOf(db, runId);
      expect(attempt).toMatchObject({ number: 1, state: "Succeeded", worker_id: `test-${process.pid}` });
      const usage = await db.pool.query(`SELECT tokens_in, tokens_out, cost_usd, duration_ms FROM attempts WHERE run_id = $1`, [runId]);
      expect(usage.rows[0].tokens_in).toBeGreaterThan(0);
      expect(usage.rows[0].duration_ms).toBeGreaterThan(0);

      const lines = await transcript(runId);
      expect(lines.filter((l) => l.stream === "stdout").map((l) => l.text)).toEqual(
        expect.arrayContaining([expect.stringContaining("demo agent: first line: Add a greeting"), expect.stringContaining("demo agent: committed")]),
      );
      expect(lines.some((l) => l.stream === "system" && /pull request #\d+/.test(l.text))).toBe(true);
      await waitFor("a transcript notification", async () => notified.includes(runId), 2_000);
    } finally {
      await listener.end();
    }
  });

  it("parks a Run whose Loop asks for approval; the approval sets it moving", async () => {
    const repo = await world.addRepo("approve");
    const runId = await start(repo, 8, "Approve me", { approvalRequired: true });
    await waitFor("the park", async () => (await runState(db, runId)) === "Waiting");
    expect(await attemptsOf(db, runId)).toEqual([]);
    await approveRun(ops, runId, "octo-admin");
    expect(await settled(runId)).toBe("Succeeded");
    await expect(approveRun(ops, runId, "octo-admin")).rejects.toMatchObject({ status: 409 });
  });

  it("retries an InfraFailure by itself up to Attempt 3, then waits for the operator", async () => {
    const repo = await world.addRepo("infra");
    github.failMints(repo, 3);
    const runId = await start(repo, 9, "Flaky infrastructure");
    expect(await settled(runId)).toBe("Failed");
    const failed = await attemptsOf(db, runId);
    expect(failed.map((a) => [a.number, a.state, a.failure_kind, a.failure_category])).toEqual([
      [1, "Failed", "InfraFailure", "transport"],
      [2, "Failed", "InfraFailure", "transport"],
      [3, "Failed", "InfraFailure", "transport"],
    ]);
    await retryRun(ops, runId, "octo-admin");
    expect(await settled(runId)).toBe("Succeeded");
    expect((await attemptsOf(db, runId)).map((a) => a.state)).toEqual(["Failed", "Failed", "Failed", "Succeeded"]);
  });

  it("leaves any other failure to the operator; edit-and-retry runs the amended task", async () => {
    const repo = await world.addRepo("agentfail");
    const runId = await start(repo, 10, "Break [demo:fail]");
    expect(await settled(runId)).toBe("Failed");
    await new Promise((r) => setTimeout(r, 300));
    const attempts = await attemptsOf(db, runId);
    expect(attempts.map((a) => [a.number, a.state, a.failure_kind, a.failure_category])).toEqual([[1, "Failed", "AgentFailure", "agent_exit"]]);
    await expect(editAndRetryRun(ops, runId, "octo-admin", { agent: "nobody" })).rejects.toMatchObject({ token: "unknown_agent", status: 400 });
    await editAndRetryRun(ops, runId, "octo-admin", { prompt: "Do it properly" });
    expect(await settled(runId)).toBe("Succeeded");
    expect((await attemptsOf(db, runId)).map((a) => a.state)).toEqual(["Failed", "Succeeded"]);
  });

  it("refuses an agent the roster does not allow for the repository: before its Attempt starts, and at edit-and-retry (attack 13)", async () => {
    const repo = await world.addRepo("fenced");
    const runId = await start(repo, 12, "Use another tenant's agent", { agent: "fenced" });
    expect(await settled(runId)).toBe("Failed");
    const [attempt] = await attemptsOf(db, runId);
    expect([attempt!.failure_kind, attempt!.failure_category]).toEqual(["AgentFailure", "configuration"]);
    const other = await start(repo, 13, "Break [demo:fail]");
    expect(await settled(other)).toBe("Failed");
    await expect(editAndRetryRun(ops, other, "octo-admin", { agent: "fenced" })).rejects.toMatchObject({
      token: "agent_not_allowed",
      status: 403,
      message: expect.stringContaining(`The agent "fenced" is not allowed for ${repo}`),
    });
    expect(await runState(db, other)).toBe("Failed");
  });

  it("an agent whose allow: lists a repository serves it after a rename, and not the repository created under its old name (attack 23)", async () => {
    const register = async (name: string) => {
      const made = await world.sim.createRepo({ owner: "demo-org", name, files: { "README.md": `# ${name}\n` } });
      world.sim.addRepository({ repo: made.fullName });
      await db.pool.query(`INSERT INTO repositories (id, installation_id, full_name, default_branch, updated_at) VALUES ($1, $2, $3, 'main', now())`, [
        made.id,
        world.installationId,
        made.fullName.toLowerCase(),
      ]);
      return made.fullName.toLowerCase();
    };
    const repo = await register(PINNED);
    const first = await start(repo, 1, "Pinned work", { agent: "pinned" });
    expect(await settled(first)).toBe("Succeeded");

    // renamed on GitHub, and Atelier hears of it; an organization member creates a repository under the old name
    world.sim.renameRepo({ repo, to: `${PINNED}-moved` });
    await applyInstallationWebhook(db, "repository", world.sim.deliveries({ event: "repository", action: "renamed" }).at(-1)!.payload);
    expect(await register(PINNED)).toBe(repo);

    const theirs = await start(repo, 2, "Use the pinned agent", { agent: "pinned" });
    expect(await settled(theirs)).toBe("Failed");
    const { rows } = await db.pool.query<{ failure_category: string; failure_message: string }>(`SELECT failure_category, failure_message FROM attempts WHERE run_id = $1`, [theirs]);
    expect(rows).toEqual([{ failure_category: "configuration", failure_message: expect.stringContaining(`The agent "pinned" is not allowed for ${repo}`) }]);
    const ours = await start(`demo-org/${PINNED}-moved`, 3, "Still ours", { agent: "pinned" });
    expect(await settled(ours)).toBe("Succeeded");
  });

  it("cancel stops the running agent and every process it started, wherever the worker is", async () => {
    const repo = await world.addRepo("cancel");
    const runId = await start(repo, 11, "Linger [demo:spawn-child] [demo:sleep 30]");
    await waitFor("the agent's child", async () => (await transcript(runId)).some((l) => l.text.includes("child pid")) || null);
    expect(demoChildAlive(runId)).toBe(true);
    const result = await cancelRun(ops, runId, "octo-admin");
    expect(result.canceledAttempt).toBe(`${runId}/agent/1`);
    expect(result.notified).toBeGreaterThan(0);
    await waitFor("the child gone", async () => !demoChildAlive(runId) || null, 5_000);
    expect(await runState(db, runId)).toBe("Canceled");
    expect((await attemptsOf(db, runId)).map((a) => a.state)).toEqual(["Canceled"]);
    await waitFor("the runner to let go", async () => runner.host.running === 0 || null, 5_000);
    expect(await gh(repo).pulls()).toEqual([]);
  });

  it("delivers an operator's intervention to the agent's stdin when the roster allows it", async () => {
    const repo = await world.addRepo("talk");
    const runId = await start(repo, 12, "Listen [demo:sleep 1.5]", { agent: "talker" });
    await waitFor("the agent to start", async () => (await transcript(runId)).some((l) => l.text.includes("first line")));
    await expect(intervene(ops, runId, "octo-admin", { attemptId: `${runId}/agent/9`, text: "hi" })).rejects.toMatchObject({
      token: "attempt_not_live",
      status: 409,
    });
    await intervene(ops, runId, "octo-admin", { attemptId: `${runId}/agent/1`, text: "use tabs" });
    expect(await settled(runId)).toBe("Succeeded");
    expect((await transcript(runId)).some((l) => l.stream === "stdout" && l.text.includes("heard: use tabs"))).toBe(true);
  });

  it("a forged cancel or intervention on the Redis channel does nothing: the worker acts on what Postgres says", async () => {
    const repo = await world.addRepo("forged");
    const runId = await start(repo, 15, "Listen on [demo:sleep 2]", { agent: "talker" });
    await waitFor("the agent to start", async () => (await transcript(runId)).some((l) => l.text.includes("first line")));
    const channels = redisNames(`${prefix}:`);
    // an attacker who can publish on Redis: a cancel for the running Attempt, an intervention with no audit row behind it
    expect(await publishCancel(runner.redis, channels, { runId, attemptId: `${runId}/agent/1` })).toBeGreaterThan(0);
    expect(await publishIntervention(runner.redis, channels, { runId, auditId: "999999999" })).toBeGreaterThan(0);
    expect(await runner.redis.publish(channels.interveneChannel, JSON.stringify({ runId, attemptId: `${runId}/agent/1`, text: "rm -rf /", actor: "mallory" }))).toBeGreaterThan(0);
    expect(await settled(runId)).toBe("Succeeded");
    expect((await attemptsOf(db, runId)).map((a) => a.state)).toEqual(["Succeeded"]);
    expect((await transcript(runId)).some((l) => l.text.includes("rm -rf") || l.text.includes("mallory"))).toBe(false);
  });

  it("gives the newest Event queued behind a Run its own Run once the Item still matches, and ignores them otherwise", async () => {
    const repo = await world.addRepo("queued");
    const first = await start(repo, 13, "First take [demo:sleep 1]");
    await waitFor("the first Attempt", async () => (await runState(db, first)) === "Running");
    const older = await claim(db, issueEvent(repo, 13, "h2", "Second take"));
    const newer = await claim(db, issueEvent(repo, 13, "h3", "Third take"));
    expect([older.tag, newer.tag]).toEqual(["Queued", "Queued"]);
    expect(await settled(first)).toBe("Succeeded");
    const next = await waitFor("the queued Event's Run", async () => {
      const { rows } = await db.pool.query<{ id: string; state: string }>(
        `SELECT r.id, r.state FROM runs r WHERE r.item_key = $1 AND r.id <> $2`,
        [JSON.stringify(["github", repo, 13]), first],
      );
      return rows[0];
    });
    expect(await settled(next.id)).toBe("Succeeded");
    const { rows: events } = await db.pool.query(`SELECT status, reason, submission->>'prompt' AS prompt FROM events WHERE repo = $1 ORDER BY received_at`, [repo]);
    expect(events).toEqual([
      { status: "Claimed", reason: null, prompt: "First take [demo:sleep 1]" },
      { status: "Ignored", reason: "superseded_by_newer", prompt: "Second take" },
      { status: "Claimed", reason: null, prompt: "Third take" },
    ]);

    // the Item stopped matching while the next Run worked: what queued behind it is ignored
    const third = await start(repo, 14, "Work [demo:sleep 1]");
    await waitFor("the Attempt", async () => (await runState(db, third)) === "Running");
    await claim(db, issueEvent(repo, 14, "h4", "Stale"));
    recheck = false;
    try {
      expect(await settled(third)).toBe("Succeeded");
      await waitFor("the queued Event ignored", async () => {
        const { rows } = await db.pool.query(`SELECT status, reason FROM events WHERE repo = $1 AND number = 14 AND content_hash = 'h4'`, [repo]);
        return rows[0]?.status === "Ignored" ? rows[0] : null;
      });
    } finally {
      recheck = true;
    }
  });
});
