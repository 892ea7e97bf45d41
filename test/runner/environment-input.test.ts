import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFailure } from "../../lib/engine/failure";
import type { EnvironmentSpec } from "../../lib/executor/environment/environment-spec";
import { DEFAULT_REGISTRIES } from "../../lib/executor/environment/registries";
import type { AttemptInput, AttemptOutcome } from "../../lib/executor/execute-attempt";
import { trustedTrigger } from "../../lib/store/runs/run-environment";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { agents, attemptsOf, issueEvent, openRun, runState, startRunner, uniquePrefix, waitFor, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * What the runner hands the executor for the environment: the Loop's `environment:` as the
 * Event recorded it, the repository's GitHub id, whether the trigger may write the snapshot,
 * the instance's registry allowlist, and the roster's toolchains the environment picks.
 */

const db = testDb();
const prefix = uniquePrefix("envin");
let world: SimWorld;
let workspaceRoot: string;
let runner: RunnerUnderTest;
const calls: AttemptInput[] = [];

async function execute(input: AttemptInput): Promise<AttemptOutcome> {
  calls.push(input);
  const usage = { durationMs: 10, agentMs: 0, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false, costExact: false, model: null, turns: null, sessionId: null };
  return { tag: "Failed", failure: agentFailure("configuration", "setup_failed: test"), usage };
}

const NODE_X = { name: "node-x", path: "/opt/atelier/toolchains/node-x", root: "/opt/atelier/toolchains" };
const ENVIRONMENT: EnvironmentSpec = { setup: "npm ci", cache: null, key: null, verify: "npm test", onVerifyFailure: null, maxVerifyRounds: null, env: { NODE_ENV: "test" }, toolchains: [] };

beforeAll(async () => {
  world = await startSimWorld(db);
  workspaceRoot = mkdtempSync(join(tmpdir(), "atelier-envin-ws-"));
  runner = await startRunner({ db, prefix, github: world.github, workspaceRoot, roster: agents(), execute, toolchains: { "node-x": NODE_X } });
});
afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
});

/** A Run of an issue whose Loop declares `environment`, settled (the executor here fails every Attempt). */
async function failedRun(actor: { login: string; permission: string } | null, association: string | null, environment: EnvironmentSpec): Promise<{ repo: string; runId: string }> {
  const repo = await world.addRepo("envin");
  const event = issueEvent(repo, 5, `h-${calls.length}`, "Fix it");
  const run = await openRun(db, {
    ...event,
    submission: { ...event.submission, environment, actor: actor ? { ...actor, source: "webhook" } : null, authorAssociation: association },
  });
  await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
  await waitFor(`the Attempt of ${run.runId}`, async () => (await runState(db, run.runId)) === "Failed");
  return { repo, runId: run.runId };
}

async function inputFor(actor: { login: string; permission: string } | null, association: string | null, environment = ENVIRONMENT): Promise<AttemptInput> {
  const { repo, runId } = await failedRun(actor, association, environment);
  const { rows } = await db.pool.query<{ id: string }>(`SELECT id::text FROM repositories WHERE full_name = $1`, [repo.toLowerCase()]);
  const input = calls.find((c) => c.runId === runId)!;
  expect(input.repositoryId).toBe(rows[0]!.id);
  return input;
}

describe("the runner gives the executor the Run's environment", () => {
  it("a writer's Run on an insider's issue: the environment, trusted, and the default registries", async () => {
    const input = await inputFor({ login: "octo-writer", permission: "write" }, "MEMBER");
    expect(input.environment).toEqual(ENVIRONMENT);
    expect(input.trusted).toBe(true);
    expect(input.registries).toEqual(DEFAULT_REGISTRIES);
  });

  it("a reader's Run is not trusted with the snapshot", async () => {
    const input = await inputFor({ login: "octo-reader", permission: "read" }, "MEMBER");
    expect(input.environment).toEqual(ENVIRONMENT);
    expect(input.trusted).toBe(false);
  });

  it("the toolchains the environment picks, as the roster defines them; none when it picks none", async () => {
    expect((await inputFor({ login: "octo-writer", permission: "write" }, "MEMBER", { ...ENVIRONMENT, toolchains: ["node-x"] })).toolchains).toEqual([NODE_X]);
    expect((await inputFor({ login: "octo-writer", permission: "write" }, "MEMBER")).toolchains).toEqual([]);
  });

  it("a toolchain the roster no longer offers fails the Attempt (configuration) before the executor runs", async () => {
    const { runId } = await failedRun({ login: "octo-writer", permission: "write" }, "MEMBER", { ...ENVIRONMENT, toolchains: ["node-gone"] });
    expect(calls.find((c) => c.runId === runId)).toBeUndefined();
    const [attempt] = await attemptsOf(db, runId);
    expect(attempt).toMatchObject({ failure_kind: "AgentFailure", failure_category: "configuration" });
    const { rows } = await db.pool.query<{ text: string }>(`SELECT text FROM transcript_entries WHERE run_id = $1 AND text LIKE 'toolchain_unavailable:%'`, [runId]);
    expect(rows[0]?.text).toContain("the roster no longer offers the toolchain node-gone");
  });
});

describe("trustedTrigger", () => {
  const writer = { login: "w", permission: "write", source: "webhook" as const };
  it("trusts a Tick and a writer on an insider's Item, nothing else", () => {
    expect(trustedTrigger({ actor: null }, "tick")).toBe(true);
    expect(trustedTrigger({ actor: writer, authorAssociation: "OWNER" }, "item")).toBe(true);
    expect(trustedTrigger({ actor: writer, authorAssociation: "NONE" }, "item")).toBe(false); // an outsider's text in the prompt
    expect(trustedTrigger({ actor: writer, authorAssociation: "MEMBER", chainDepth: 1 }, "item")).toBe(false); // a Run's Item
    expect(trustedTrigger({ actor: writer, authorAssociation: "MEMBER", approvalReason: { token: "public_repository" } }, "item")).toBe(false);
    expect(trustedTrigger({ actor: writer, authorAssociation: "MEMBER", branch: "atelier/fix/3" }, "item")).toBe(false); // a pull request's branch
    expect(trustedTrigger({ actor: { ...writer, permission: "triage" }, authorAssociation: "MEMBER" }, "item")).toBe(false);
    expect(trustedTrigger({ actor: null }, "item")).toBe(false);
  });
});
