// The agent sandbox's costs, each beside the raw operation under it, in paired rounds:
//  - starting an agent that exits at once in its sandbox (box, cgroup, bubblewrap, namespaces)
//    against a bare spawn of the same command: RATIO sandbox_start_vs_spawn (times, ours / raw);
//  - preparing an Attempt (fetch of a warm cache, the box, the private clone's checkout, handing
//    it to the Attempt's uid) on a repository of 10,000 files, against a raw `git worktree add`
//    from the same cache: RATIO attempt_prepare_vs_worktree (times, ours / raw; goal ≤ 1.5).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { boxPaths, makeBox } from "../../lib/executor/agent-sandbox/box";
import { DEFAULT_SANDBOX_LIMITS } from "../../lib/executor/agent-sandbox/policy";
import { probeSandbox } from "../../lib/executor/agent-sandbox/probe";
import { spawnSandboxed } from "../../lib/executor/agent-sandbox/spawn-sandboxed";
import { prepareWorkspace, removeWorkspace } from "../../lib/executor/workspace";
import { cacheDir } from "../../lib/executor/workspace-paths";
import { bench, median, ratio } from "./measure";

const ROUNDS = 15;
/** A checkout of 10,000 files takes seconds on a busy machine: fewer paired rounds of it. */
const PREPARE_ROUNDS = 5;
const FILES = 10_000;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.invalid", "-c", "init.defaultBranch=main", ...args], { cwd, stdio: "pipe" });

function exitAtOnce(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", () => resolve());
  });
}

async function sandboxStart(dir: string): Promise<{ sandboxMs: number[]; spawnMs: number[] }> {
  const sandboxMs: number[] = [];
  const spawnMs: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const box = boxPaths(join(dir, `start-${round}`), `bench-start-${round}`, true);
    mkdirSync(box.worktree, { recursive: true });
    await makeBox(box);
    let t0 = performance.now();
    const sandboxed = await spawnSandboxed({ name: `bench-start-${round}`, box, command: ["/bin/true"], env: { PATH: "/usr/bin:/bin" }, egress: [], limits: DEFAULT_SANDBOX_LIMITS });
    sandboxed.child.stdin.end();
    await sandboxed.watch.exited;
    await sandboxed.dispose();
    const s = performance.now() - t0;
    t0 = performance.now();
    await exitAtOnce("/bin/true", []);
    const b = performance.now() - t0;
    if (round > 0) {
      sandboxMs.push(s);
      spawnMs.push(b);
    }
  }
  return { sandboxMs, spawnMs };
}

function bigRemote(dir: string): string {
  const work = join(dir, "work");
  const remote = join(dir, "remote.git");
  mkdirSync(work);
  git(dir, "init", "--bare", "--quiet", remote);
  git(work, "init", "--quiet");
  for (let i = 0; i < FILES; i++) {
    const sub = join(work, `pkg-${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(sub);
    writeFileSync(join(sub, `file-${i}.ts`), `export const value${i} = ${i};\n`);
  }
  git(work, "add", ".");
  git(work, "commit", "--quiet", "-m", "10,000 files");
  git(work, "push", "--quiet", remote, "HEAD:refs/heads/main");
  return remote;
}

async function attemptPrepare(dir: string): Promise<{ oursMs: number[]; worktreeMs: number[] }> {
  const remote = bigRemote(dir);
  const root = join(dir, "workspaces");
  const request = (n: number) => ({
    root,
    repo: "bench/big",
    cloneUrl: pathToFileURL(remote).href,
    token: "bench-token-not-a-secret",
    defaultBranch: "main",
    branch: `atelier/bench/${n}`,
    runId: `bench${n}`,
    attemptId: `bench${n}/agent/1`,
    sandboxed: true,
  });
  await removeWorkspace(await prepareWorkspace(request(0))); // the warm cache
  const cache = cacheDir(root, "bench/big");
  const sha = git(cache, "rev-parse", "refs/remotes/origin/main").toString().trim();
  const oursMs: number[] = [];
  const worktreeMs: number[] = [];
  for (let round = 1; round <= PREPARE_ROUNDS; round++) {
    let t0 = performance.now();
    const ws = await prepareWorkspace(request(round));
    oursMs.push(performance.now() - t0);
    await removeWorkspace(ws);
    const wt = join(dir, `wt-${round}`);
    t0 = performance.now();
    git(cache, "fetch", "--quiet", "origin"); // what every Attempt pays, as ours does
    git(cache, "worktree", "add", "--detach", "--quiet", wt, sha);
    worktreeMs.push(performance.now() - t0);
    git(cache, "worktree", "remove", "--force", wt);
  }
  return { oursMs, worktreeMs };
}

export async function sandboxBench(): Promise<void> {
  const probe = await probeSandbox();
  if (!probe.ok) {
    console.log(`# sandbox: skipped (${probe.reason})`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "atelier-bench-sandbox-"));
  try {
    const start = await sandboxStart(dir);
    bench("sandbox_start_p50_ms", median(start.sandboxMs), "ms");
    bench("spawn_p50_ms", median(start.spawnMs), "ms");
    ratio("sandbox_start_vs_spawn", median(start.sandboxMs.map((s, i) => s / start.spawnMs[i]!)));
    const prepare = await attemptPrepare(dir);
    bench("attempt_prepare_ms", median(prepare.oursMs), "ms");
    bench("worktree_add_ms", median(prepare.worktreeMs), "ms");
    ratio("attempt_prepare_vs_worktree", median(prepare.oursMs.map((o, i) => o / prepare.worktreeMs[i]!)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
