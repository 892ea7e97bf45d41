import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFailure } from "../../lib/engine/failure";
import type { AttemptInput, AttemptOutcome } from "../../lib/executor/execute-attempt";
import { editAndRetryRun, retryRun, type OperatorDeps } from "../../lib/runner/operator";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * What the runner hands the executor from the Run: the model its Loop picked, and after an
 * operator's retry the session the last Attempt's agent reported. The executor is a function
 * the runner is given (its real one runs the real CLIs in test/executor).
 */

const db = testDb();
const prefix = uniquePrefix("resume");
let world: SimWorld;
let workspaceRoot: string;
let runner: RunnerUnderTest;
let ops: OperatorDeps;
const calls: AttemptInput[] = [];

/** Every Attempt fails as an agent failure (left to the operator), reporting session `s-<n>`. */
async function execute(input: AttemptInput): Promise<AttemptOutcome> {
  calls.push(input);
  const n = calls.filter((c) => c.runId === input.runId).length;
  const usage = { durationMs: 1_000, agentMs: 900, tokensIn: 10, tokensOut: 5, costUsd: 0.01, costEstimated: false, costExact: true, model: input.model ?? "default-model", turns: 1, sessionId: `s-${n}` };
  return { tag: "Failed", failure: agentFailure("agent_exit", "the agent gave up"), usage };
}

beforeAll(async () => {
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-resume-ws-"));
  runner = await startRunner({ db, prefix, github: world.github, workspaceRoot, roster: agents({ other: { model: "other-default", models: ["claude-opus-4-5"] } }), execute });
  ops = { db, redis: runner.redis, workQueue: runner.queue, recheckCondition: async () => true, keyPrefix: `${prefix}:`, roster: runner.host.context.config.roster };
});
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

const attemptsDone = (runId: string, n: number) =>
  waitFor(`Attempt ${n} of ${runId} to be recorded`, async () => {
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM attempts WHERE run_id = $1 AND state <> 'Running'`, [runId]);
    return rows[0].n >= n && (await runState(db, runId)) === "Failed";
  });

describe("the runner passes the Run's model and resumed session to the executor", () => {
  it("the Loop's model on every Attempt; the last session after a retry, none after another agent", async () => {
    const repo = await world.addRepo("resume");
    const event = issueEvent(repo, 31, "h1", "Add a changelog");
    const run = await openRun(db, { ...event, submission: { ...event.submission, model: "claude-haiku-4-5" } });
    await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await attemptsDone(run.runId, 1);
    const mine = () => calls.filter((c) => c.runId === run.runId);
    expect(mine().map((c) => [c.model, c.resumeSession])).toEqual([["claude-haiku-4-5", null]]);
    const { rows } = await db.pool.query(`SELECT session_id, model, turns, cost_exact FROM attempts WHERE run_id = $1`, [run.runId]);
    expect(rows).toEqual([{ session_id: "s-1", model: "claude-haiku-4-5", turns: 1, cost_exact: true }]);

    await retryRun(ops, run.runId, "octo-admin");
    await attemptsDone(run.runId, 2);
    await editAndRetryRun(ops, run.runId, "octo-admin", { prompt: "Add a changelog, with dates" });
    await attemptsDone(run.runId, 3);
    // another agent does not reset the model silently: it does not offer claude-haiku-4-5, so the amendment must name one
    await expect(editAndRetryRun(ops, run.runId, "octo-admin", { agent: "other" })).rejects.toMatchObject({
      token: "model_not_offered",
      details: { agent: "other", model: "claude-haiku-4-5", models: ["other-default", "claude-opus-4-5"] },
    });
    await expect(editAndRetryRun(ops, run.runId, "octo-admin", { agent: "other", model: "claude-nope" })).rejects.toMatchObject({ token: "model_not_offered" });
    expect(await runState(db, run.runId)).toBe("Failed");
    await editAndRetryRun(ops, run.runId, "octo-admin", { agent: "other", model: "claude-opus-4-5" });
    await attemptsDone(run.runId, 4);
    // the model alone, back to the agent's default (null)
    await editAndRetryRun(ops, run.runId, "octo-admin", { model: null });
    await attemptsDone(run.runId, 5);
    expect(mine().map((c) => [c.agent.name, c.model, c.resumeSession, c.prompt])).toEqual([
      ["demo", "claude-haiku-4-5", null, event.submission.prompt],
      ["demo", "claude-haiku-4-5", "s-1", event.submission.prompt],
      ["demo", "claude-haiku-4-5", "s-2", "Add a changelog, with dates"],
      // another agent, with the model the amendment picked from its roster models: a new conversation
      ["other", "claude-opus-4-5", null, "Add a changelog, with dates"],
      // the same agent, another model: its session goes on
      ["other", null, "s-4", "Add a changelog, with dates"],
    ]);
  });
});
