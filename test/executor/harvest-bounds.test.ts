import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HARVEST_LIMITS, type HarvestLimits } from "../../lib/executor/export-agent-commits";
import { harvest, type Harvest } from "../../lib/executor/harvest";
import { prepareWorkspace, type Workspace } from "../../lib/executor/workspace";
import { makeRemote, remoteSha, sh, type RemoteFixture } from "./git-fixture";

/**
 * What the agent leaves in its clone, played by the attacker: harvest takes it out inside a
 * sandbox with limits, and what it refuses it says in a sentence, with nothing pushed and the
 * worker (this test process) unharmed. Before, the worker's own git ran `add --all` on the clone:
 * an 8 TB sparse file was hashed for as long as it took, a nested gitfile made it read another
 * repository on the host, and a gitlink or a `.git` entry was pushed as it came.
 */

const TOKEN = "ghs_harvestBoundsToken0123456789abcdef";
const BRANCH = "atelier/start-dev/9";
let fx: RemoteFixture;
beforeEach(() => {
  fx = makeRemote();
});
afterEach(() => fx.cleanup());

/** The agent's clone; unsandboxed for the tests that commit in it from here (its alternates then point at the cache, not the sandbox's path). */
async function agentClone(sandboxed = true): Promise<Workspace> {
  return prepareWorkspace({
    root: fx.root,
    repo: "acme/widgets",
    repositoryId: "1001",
    cloneUrl: fx.url,
    token: TOKEN,
    defaultBranch: "main",
    branch: BRANCH,
    runId: "r9",
    attemptId: "r9/agent/1",
    sandboxed,
  });
}

function take(ws: Workspace, limits: Partial<HarvestLimits> = {}): Promise<Harvest> {
  return harvest({
    name: ws.name,
    dir: ws.dir,
    box: ws.box,
    cacheDir: ws.cacheDir,
    attemptId: ws.attemptId,
    baseSha: ws.base.sha,
    branch: BRANCH,
    remoteBranchSha: null,
    cloneUrl: fx.url,
    token: TOKEN,
    sandboxed: ws.sandboxed,
    limits: { ...DEFAULT_HARVEST_LIMITS, ...limits },
  });
}

describe("harvest, given a hostile clone", () => {
  it("refuses an 8 TB sparse file by its size, without reading it", async () => {
    const ws = await agentClone();
    writeFileSync(join(ws.worktree, "notes.md"), "small\n");
    execFileSync("truncate", ["-s", "8T", join(ws.worktree, "disk.img")]);
    const h = await take(ws);
    expect(h.leftoversRefused).toBe(`a file larger than ${DEFAULT_HARVEST_LIMITS.maxFileBytes} bytes was left uncommitted`);
    expect(h.pushed).toBe(false);
    expect(remoteSha(fx.remote, BRANCH)).toBeNull();
  });

  it("refuses a nested gitfile pointing at another repository of the host", async () => {
    const other = join(fx.dir, "other");
    sh(fx.dir, "init", "--quiet", "-b", "main", other);
    writeFileSync(join(other, "secret.txt"), "another tenant's code\n");
    sh(other, "add", "secret.txt");
    sh(other, "commit", "--quiet", "-m", "theirs");
    const ws = await agentClone();
    const nested = join(ws.worktree, "vendor", "lib");
    mkdirSync(nested, { recursive: true });
    writeFileSync(join(nested, ".git"), `gitdir: ${join(other, ".git")}\n`);
    writeFileSync(join(nested, "x.txt"), "x\n");
    const h = await take(ws);
    expect(h.leftoversRefused).toBe("a nested repository (a .git directory, gitfile or link below the top of the clone) is never taken");
    expect(h.pushed).toBe(false);
    expect(remoteSha(fx.remote, BRANCH)).toBeNull();
  });

  it("refuses more files than its limit (set low here; three million files meet the same count)", async () => {
    const ws = await agentClone();
    for (let i = 0; i < 50; i++) writeFileSync(join(ws.worktree, `f${i}.txt`), `${i}\n`);
    const h = await take(ws, { maxEntries: 20 });
    expect(h.leftoversRefused).toBe("more than 20 files were left uncommitted");
    expect(h.pushed).toBe(false);
  });

  it("stops at its wall clock: a clean filter the agent configured that never ends", async () => {
    const ws = await agentClone();
    sh(ws.worktree, "config", "filter.slow.clean", "sleep 600");
    writeFileSync(join(ws.worktree, ".gitattributes"), "* filter=slow\n");
    writeFileSync(join(ws.worktree, "a.txt"), "a\n");
    const h = await take(ws, { timeoutMs: 2_000 });
    expect(h.problem).toBe("taking the agent's work out of its clone was stopped after 2 s");
    expect(h.pushed).toBe(false);
  });

  it("refuses a gitlink the agent committed", async () => {
    const ws = await agentClone(false);
    sh(ws.worktree, "update-index", "--add", "--cacheinfo", `160000,${ws.base.sha},vendor/sub`);
    sh(ws.worktree, "commit", "--quiet", "-m", "add a submodule");
    // and take it out again, so that only the history holds it
    sh(ws.worktree, "rm", "--quiet", "--cached", "vendor/sub");
    sh(ws.worktree, "commit", "--quiet", "-m", "hide it");
    const h = await take(ws);
    expect(h.problem).toBe("the agent's work was refused: it adds a gitlink (a submodule commit), which is never taken from an agent");
    expect(h.pushed).toBe(false);
    expect(remoteSha(fx.remote, BRANCH)).toBeNull();
  });

  it("fscks the agent's commits strictly: a tree entry named .git, in its history, is refused", async () => {
    const ws = await agentClone(false);
    const piped = (input: string, ...args: string[]) => execFileSync("git", args, { cwd: ws.worktree, input, encoding: "utf8" }).trim();
    const blob = piped("[core]\n\tfsmonitor = evil\n", "hash-object", "-w", "--stdin");
    const inner = piped(`100644 blob ${blob}\tconfig\n`, "mktree");
    const tree = piped(`040000 tree ${inner}\t.git\n`, "mktree");
    const planted = sh(ws.worktree, "commit-tree", tree, "-p", ws.base.sha, "-m", "plant .git");
    const hidden = sh(ws.worktree, "commit-tree", `${ws.base.sha}^{tree}`, "-p", planted, "-m", "hide it");
    sh(ws.worktree, "update-ref", "HEAD", hidden);
    const h = await take(ws);
    expect(h.problem).toMatch(/^the agent.s work was refused \(error: object [0-9a-f]+: hasDotgit: contains .\.git./);
    expect(h.pushed).toBe(false);
  });

  it("still takes an ordinary change, committed or not", async () => {
    const ws = await agentClone();
    writeFileSync(join(ws.worktree, "hello.txt"), "hello\n");
    const h = await take(ws);
    expect(h).toMatchObject({ pushed: true, committedLeftovers: true, problem: null, leftoversRefused: null });
    expect(sh(fx.remote, "show", `${BRANCH}:hello.txt`)).toBe("hello");
  });
});
