import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseInstanceConfig, type InstanceConfig } from "../../lib/config/roster";
import type { LoopDefinition } from "../../lib/loops/config-schema";
import { readRepositoryConfig } from "../../lib/triggers/repository-config";
import { testDb } from "../support/db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { AGENT_ENV, attemptsOf, issueEvent, openRun, settledState, startRunner, uniquePrefix, type RunnerUnderTest } from "./support/runner-fixture";

/**
 * Toolchains on the whole stack: a repository's `.github/atelier.yml` (read from the GitHub
 * simulator over HTTP, validated against the roster) picks a toolchain made for the test; the
 * runner's Attempt mounts it, setup, the agent and verify find its program first on PATH, the
 * transcript in Postgres says so, and when the repository picks another toolchain the
 * environment snapshot's key changes.
 */

const db = testDb();
const prefix = uniquePrefix("toolchain-flow");
let world: SimWorld;
let runner: RunnerUnderTest;
let scratch: string;
let roster: InstanceConfig;

/** A toolchain whose bin/node-x prints its version. */
function toolchainDir(root: string, name: string, version: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "bin", "node-x"), `#!/bin/sh\necho "node-x ${version}"\n`, { mode: 0o755 });
  chmodSync(dir, 0o755);
  return dir;
}

const configFile = (toolchain: string) => `environment:
  toolchain: ${toolchain}
  setup: |
    echo "setup sees $(node-x)"
    mkdir -p tc-cache && node-x > tc-cache/version
  cache: [tc-cache]
  key: []
  verify: echo "verify sees $(node-x)" && test "$(cat tc-cache/version)" = "$(node-x)"
loops:
  start-dev: { on: issues, agent: shell, prompt: go }
`;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "atelier-toolchain-flow-"));
  chmodSync(scratch, 0o755);
  const root = join(scratch, "toolchains");
  toolchainDir(root, "node-x", "v99.1.0");
  toolchainDir(root, "node-y", "v77.0.0");
  roster = parseInstanceConfig(
    `agents:
  shell:
    command: [sh, -c, 'echo "agent sees $(node-x) at $(command -v node-x)"']
    max_attempt_minutes: 2
toolchain_roots: [${root}]
toolchains:
  node-x: ${root}/node-x
  node-y: ${root}/node-y
`,
    "atelier.config.yml",
  );
  world = await startSimWorld(db);
  runner = await startRunner({
    db,
    prefix,
    github: world.github,
    workspaceRoot: join(scratch, "workspaces"),
    roster: roster.agents,
    toolchains: roster.toolchains,
    snapshots: { dir: join(scratch, "environments"), capBytes: 1024 ** 3 },
    agentEnv: AGENT_ENV,
  });
}, 60_000);

afterAll(async () => {
  await runner?.close();
  await world?.close();
  await db.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The repository's Loop as Atelier reads it from the simulator. */
async function loopOf(repo: string): Promise<LoopDefinition> {
  const config = await readRepositoryConfig(world.app.installationOctokit(world.installationId), repo, roster, new Date());
  expect(config.errors).toEqual([]);
  return config.loops[0]!;
}

/** A writer's Run of the Loop on a member's issue (trusted: it keeps the snapshot); its transcript once it settled. */
async function runOf(repo: string, loop: LoopDefinition, hash: string): Promise<{ state: string; transcript: string }> {
  const issue = world.sim.createIssue({ repo, title: "Use the toolchain", login: "octo-admin" });
  const event = issueEvent(repo, issue.number, hash, "go", { agent: "shell" });
  const run = await openRun(db, {
    ...event,
    submission: { ...event.submission, environment: loop.environment!, actor: { login: "octo-admin", permission: "admin", source: "webhook" }, authorAssociation: "MEMBER" },
  });
  await runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
  const state = await settledState(db, run.runId, 90_000);
  const { rows } = await db.pool.query<{ stream: string; text: string }>(`SELECT stream, text FROM transcript_entries WHERE run_id = $1 ORDER BY id`, [run.runId]);
  const [attempt] = await attemptsOf(db, run.runId);
  expect(attempt).toBeDefined();
  return { state, transcript: rows.map((r) => `[${r.stream}] ${r.text}`).join("\n") };
}

const keptKey = (text: string) => /environment: kept snapshot ([0-9a-f]{12})/.exec(text)?.[1] ?? null;

describe("a repository picks a toolchain of the instance", () => {
  it("setup, the agent and verify see it on PATH, the transcript shows it, and picking another toolchain changes the snapshot's key", async () => {
    const repo = await world.addRepo("toolchain", { ".github/atelier.yml": configFile("node-x") });
    const loop = await loopOf(repo);
    expect(loop.environment?.toolchains).toEqual(["node-x"]);

    const first = await runOf(repo, loop, "h1");
    expect(first.state, first.transcript).toBe("Succeeded");
    expect(first.transcript).toMatch(/\[system\] toolchains: node-x \(.*\/toolchains\/node-x\), read-only, bin first on PATH for setup, the agent and verify/);
    expect(first.transcript).toContain("[setup] setup sees node-x v99.1.0");
    expect(first.transcript).toMatch(/\[stdout\] agent sees node-x v99\.1\.0 at .*\/toolchains\/node-x\/bin\/node-x/);
    expect(first.transcript).toContain("verify sees node-x v99.1.0");
    expect(first.transcript).toMatch(/verify passed in/);
    const firstKey = keptKey(first.transcript);
    expect(firstKey).not.toBeNull();

    // the repository moves to the other toolchain: a new snapshot key, setup runs again
    await world.sim.pushCommit({ repo, branch: "main", files: { ".github/atelier.yml": configFile("node-y") }, login: "octo-admin" });
    const moved = await loopOf(repo);
    expect(moved.environment?.toolchains).toEqual(["node-y"]);
    const second = await runOf(repo, moved, "h2");
    expect(second.state, second.transcript).toBe("Succeeded");
    expect(second.transcript).toContain("[setup] setup sees node-x v77.0.0");
    expect(second.transcript).toContain("verify sees node-x v77.0.0");
    expect(keptKey(second.transcript)).not.toBeNull();
    expect(keptKey(second.transcript)).not.toBe(firstKey);
  }, 240_000);
});
