import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listLeftoverWorktrees, salvageOrRemove } from "../../lib/executor/leftover-worktrees";
import { isProcessGroupAlive } from "../../lib/executor/process-group";
import { prepareWorkspace, recordAgentProcess, type Workspace } from "../../lib/executor/workspace";
import { attemptsDir } from "../../lib/executor/workspace-paths";
import { makeRemote, remoteSha, sh, type RemoteFixture } from "./git-fixture";

const TOKEN = "ghs_leftoverToken0123456789abcdefghijkl";
let fx: RemoteFixture;
beforeEach(() => {
  fx = makeRemote();
});
afterEach(() => fx.cleanup());

/** A worktree as a process that has since died would have left it. */
async function deadProcessWorktree(attempt: number, branch = "atelier/start-dev/5"): Promise<Workspace> {
  const ws = await prepareWorkspace({
    root: fx.root,
    repo: "acme/widgets",
    repositoryId: "1001",
    cloneUrl: fx.url,
    token: TOKEN,
    defaultBranch: "main",
    branch,
    runId: "r5",
    attemptId: `r5/agent/${attempt}`,
    sandboxed: false,
  });
  markOwnerDead(ws);
  return ws;
}

function markOwnerDead(ws: Workspace) {
  const meta = JSON.parse(readFileSync(ws.metaFile, "utf8"));
  meta.owner.pid = spawnSync("true").pid;
  writeFileSync(ws.metaFile, JSON.stringify(meta));
}

function commitIn(worktree: string, file: string, text: string, message: string) {
  writeFileSync(join(worktree, file), text);
  sh(worktree, "add", file);
  sh(worktree, "commit", "--quiet", "-m", message);
}

const token = () => TOKEN;

describe("start-up recovery of leftover worktrees", () => {
  it("pushes a dead Attempt's commits to its branch, then removes the worktree", async () => {
    const ws = await deadProcessWorktree(1);
    commitIn(ws.worktree, "half-done.txt", "work in progress\n", "Agent: half done");

    const [leftover, ...others] = await listLeftoverWorktrees(fx.root);
    expect(others).toEqual([]);
    expect(leftover).toMatchObject({ name: "r5_agent_1", path: ws.dir, ownerAlive: false });
    expect(leftover!.meta).toMatchObject({ attemptId: "r5/agent/1", branch: "atelier/start-dev/5" });

    const outcome = await salvageOrRemove(leftover!, { token });
    expect(outcome.tag).toBe("Salvaged");
    const head = remoteSha(fx.remote, "atelier/start-dev/5");
    expect(outcome.tag === "Salvaged" && outcome.harvest).toMatchObject({ pushed: true, headSha: head, commits: [{ subject: "Agent: half done" }] });
    expect(sh(fx.remote, "show", `${head}:half-done.txt`)).toBe("work in progress");
    expect(existsSync(ws.worktree)).toBe(false);
    expect(await listLeftoverWorktrees(fx.root)).toEqual([]);
  });

  it("salvages uncommitted changes too", async () => {
    const ws = await deadProcessWorktree(1);
    writeFileSync(join(ws.worktree, "draft.md"), "draft\n");
    const [leftover] = await listLeftoverWorktrees(fx.root);
    const outcome = await salvageOrRemove(leftover!, { token });
    expect(outcome.tag === "Salvaged" && outcome.harvest.commits).toMatchObject([
      { subject: "Atelier: uncommitted changes from r5/agent/1 (salvaged)" },
    ]);
  });

  it("removes a worktree with nothing beyond its base", async () => {
    const ws = await deadProcessWorktree(1);
    const [leftover] = await listLeftoverWorktrees(fx.root);
    expect(await salvageOrRemove(leftover!, { token })).toMatchObject({ tag: "Removed", reason: "no commits beyond its base" });
    expect(existsSync(ws.worktree)).toBe(false);
    expect(remoteSha(fx.remote, "atelier/start-dev/5")).toBeNull();
    expect(sh(ws.cacheDir, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree "))).toHaveLength(1);
  });

  it("does not overwrite a branch a later Attempt pushed meanwhile", async () => {
    const ws = await deadProcessWorktree(1);
    commitIn(ws.worktree, "old.txt", "old\n", "Agent: old work");
    // Someone else pushed the branch after the dead Attempt began.
    sh(fx.work, "push", "--quiet", fx.remote, "main:refs/heads/atelier/start-dev/5");
    const moved = remoteSha(fx.remote, "atelier/start-dev/5");

    const [leftover] = await listLeftoverWorktrees(fx.root);
    const outcome = await salvageOrRemove(leftover!, { token });
    expect(outcome.tag).toBe("Removed");
    expect(outcome.tag === "Removed" && outcome.reason).toMatch(/moved on the remote/);
    expect(remoteSha(fx.remote, "atelier/start-dev/5")).toBe(moved);
  });

  it("stops an agent that outlived its worker before salvaging", async () => {
    const ws = await deadProcessWorktree(1);
    const orphan = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" });
    await new Promise((r) => orphan.once("spawn", r));
    try {
      await recordAgentProcess(ws, orphan.pid!);
      markOwnerDead(ws);
      const [leftover] = await listLeftoverWorktrees(fx.root);
      expect(await salvageOrRemove(leftover!, { token })).toMatchObject({ tag: "Removed" });
      expect(isProcessGroupAlive(orphan.pid!)).toBe(false);
    } finally {
      if (orphan.exitCode === null && orphan.signalCode === null) orphan.kill("SIGKILL");
    }
  });

  it("skips a worktree whose process is still running", async () => {
    await prepareWorkspace({
      root: fx.root,
      repo: "acme/widgets",
      repositoryId: "1001",
      cloneUrl: fx.url,
      token: TOKEN,
      defaultBranch: "main",
      branch: "atelier/start-dev/5",
      runId: "r5",
      attemptId: "r5/agent/1",
      sandboxed: false,
    });
    const [leftover] = await listLeftoverWorktrees(fx.root);
    expect(leftover!.ownerAlive).toBe(true);
    expect(await salvageOrRemove(leftover!, { token })).toMatchObject({ tag: "Skipped" });
    expect(existsSync(leftover!.path)).toBe(true);
  });

  it("removes a directory it knows nothing about", async () => {
    mkdirSync(join(attemptsDir(fx.root), "stray"), { recursive: true });
    writeFileSync(join(attemptsDir(fx.root), "stray", "file"), "x");
    const [leftover] = await listLeftoverWorktrees(fx.root);
    expect(leftover).toMatchObject({ name: "stray", meta: null, ownerAlive: false });
    expect(await salvageOrRemove(leftover!, { token })).toMatchObject({ tag: "Removed", reason: "no metadata" });
    expect(readdirSync(attemptsDir(fx.root))).toEqual([]);
  });
});
