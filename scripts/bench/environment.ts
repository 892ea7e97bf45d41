import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boxPaths, makeBox } from "../../lib/executor/agent-sandbox/box";
import { DEFAULT_SANDBOX_LIMITS, parseEgressRule, type EgressRule } from "../../lib/executor/agent-sandbox/policy";
import { probeSandbox } from "../../lib/executor/agent-sandbox/probe";
import { runSetup } from "../../lib/executor/environment/run-setup";
import { findSnapshot, restoreSnapshot, saveSnapshot, type SnapshotStore } from "../../lib/executor/environment/snapshot-store";
import { Redactor } from "../../lib/secrets/redact";
import { startNpmRegistry } from "../../test/support/npm-registry";
import { bench, median, ratio } from "./measure";

/**
 * Warm starts: restoring an environment snapshot of 20,000 files (hard links, and copies for
 * comparison) against `git worktree add` of a repository of the same 20,000 files, and a cold
 * setup (`npm install` in the sandbox from a registry on this machine) for reference.
 */

const FILES = 20_000;
const PER_DIR = 50;
const ROUNDS = 5;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.invalid", "-c", "init.defaultBranch=main", ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });

/** `count` small files like a package tree's, under `dir`. */
function fillTree(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const sub = join(dir, `pkg-${Math.floor(i / PER_DIR)}`);
    if (i % PER_DIR === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `file-${i % PER_DIR}.js`), `module.exports = ${i}; // ${"x".repeat(120)}\n`);
  }
}

function timed(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

async function timedAsync(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function restoreVsWorktree(dir: string): Promise<void> {
  // the repository: the same 20,000 files, committed
  const repo = join(dir, "repo");
  mkdirSync(repo);
  git(repo, "init", "--quiet");
  fillTree(join(repo, "node_modules"), FILES);
  git(repo, "add", "-A");
  git(repo, "commit", "--quiet", "-m", "tree");

  const store: SnapshotStore = { dir: join(dir, "store"), capBytes: 10 * 1024 ** 3 };
  const key = "b".repeat(64);
  const saved = await saveSnapshot(store, "1", key, ["node_modules"], { worktree: repo, home: join(dir, "home") });
  if (saved.tag !== "Saved" || saved.snapshot.files < FILES) throw new Error(`the snapshot was not kept: ${JSON.stringify(saved)}`);
  const snapshot = (await findSnapshot(store, "1", key))!;

  const worktree: number[] = [];
  const link: number[] = [];
  const copy: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    worktree.push(timed(() => git(repo, "worktree", "add", "--quiet", "--detach", join(dir, `wt-${i}`))));
    for (const [mode, into] of [["link", link], ["copy", copy]] as const) {
      const box = join(dir, `${mode}-${i}`);
      mkdirSync(box);
      into.push(await timedAsync(() => restoreSnapshot(store, snapshot, { worktree: box, home: join(box, "home") }, { link: mode === "link", owner: null })));
    }
  }
  bench("env_restore_ms", median(link), "ms");
  bench("env_restore_copy_ms", median(copy), "ms");
  bench("worktree_add_ms", median(worktree), "ms");
  ratio("env_restore_vs_worktree", median(link) / median(worktree));
}

async function coldSetup(dir: string): Promise<void> {
  const registry = await startNpmRegistry();
  try {
    const probe = await probeSandbox();
    const durations: number[] = [];
    for (let i = 0; i < 3; i++) {
      const box = boxPaths(join(dir, `setup-${i}`), `bench-setup-${i}`, probe.ok);
      mkdirSync(box.worktree, { recursive: true });
      writeFileSync(join(box.worktree, "package.json"), JSON.stringify({ name: "bench", private: true, dependencies: { "@atelier-fixture/greet-lite": "1.0.0" } }));
      await makeBox(box);
      execFileSync("chown", ["-R", `${box.uid}:${box.uid}`, box.worktree]);
      const registries = [parseEgressRule(`127.0.0.1:${registry.port}`)].filter((r): r is EgressRule => r !== null);
      const run = await runSetup({
        setup: "npm install --no-audit --no-fund --no-package-lock",
        env: { npm_config_registry: registry.url, npm_config_update_notifier: "false" },
        sandbox: probe.ok ? { name: `bench-setup-${i}`, box, limits: DEFAULT_SANDBOX_LIMITS } : null,
        registries,
        toolchains: [],
        cwd: box.worktree,
        home: box.home,
        emit: () => undefined,
        redactor: new Redactor([]),
        timeoutMs: 120_000,
        killGraceMs: 1_000,
      });
      if (run.tag !== "Passed") throw new Error(`setup failed: ${JSON.stringify(run)}`);
      durations.push(run.durationMs);
    }
    bench("setup_cold_ms", median(durations), "ms");
  } finally {
    await registry.stop();
  }
}

export async function environmentBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "atelier-bench-env-"));
  try {
    await restoreVsWorktree(dir);
    await coldSetup(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
