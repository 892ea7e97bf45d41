import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { NamedAgentSpec } from "../../lib/executor/agent-spec";
import type { AttemptInput } from "../../lib/executor/execute-attempt";
import { memorySessions } from "../support/memory-sessions";

// safe.directory: the tests arrange commits in Attempt clones, which belong to the sandbox's uid
const IDENTITY = ["-c", "user.name=Fixture", "-c", "user.email=fixture@example.invalid", "-c", "init.defaultBranch=main", "-c", "safe.directory=*"];

/** Runs git and returns its trimmed stdout. */
export function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", [...IDENTITY, ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

export interface RemoteFixture {
  /** Scratch directory holding everything. */
  dir: string;
  /** Path of the bare repository standing in for GitHub. */
  remote: string;
  /** file:// URL of the remote. */
  url: string;
  /** The executor's workspace root. */
  root: string;
  /** A checkout of the remote, for arranging and inspecting. */
  work: string;
  cleanup(): void;
}

/**
 * Removes a scratch directory, unmounting first the box quotas (tmpfs) a worker killed in the
 * test left mounted under it (start-up recovery would have unmounted them).
 */
export function removeScratch(dir: string): void {
  const mounts = readFileSync("/proc/self/mounts", "utf8").split("\n").map((line) => line.split(" ")[1] ?? "");
  for (const point of mounts.filter((p) => p.startsWith(`${dir}/`)).reverse()) execFileSync("umount", ["--lazy", point]);
  rmSync(dir, { recursive: true, force: true });
}

/** A bare repository with a main branch holding README.md, and an empty workspace root. */
export function makeRemote(): RemoteFixture {
  const dir = mkdtempSync(join(tmpdir(), "atelier-executor-"));
  const remote = join(dir, "remote.git");
  const work = join(dir, "work");
  const root = join(dir, "workspaces");
  mkdirSync(root);
  sh(dir, "init", "--bare", "--quiet", remote);
  sh(dir, "init", "--quiet", "-b", "main", work);
  writeFileSync(join(work, "README.md"), "# fixture\n");
  sh(work, "add", "README.md");
  sh(work, "commit", "--quiet", "-m", "Initial commit");
  sh(work, "push", "--quiet", remote, "main");
  sh(remote, "symbolic-ref", "HEAD", "refs/heads/main");
  return { dir, remote, url: pathToFileURL(remote).href, root, work, cleanup: () => removeScratch(dir) };
}

/** The commit a branch of the bare remote points at, or null. */
export function remoteSha(remote: string, branch: string): string | null {
  try {
    return sh(remote, "rev-parse", "--verify", "--quiet", `refs/heads/${branch}`);
  } catch {
    return null;
  }
}

/** A small git repository with one commit (a cwd for runAgent). */
export function makeRepo(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "atelier-agent-cwd-"));
  sh(dir, "init", "--quiet", "-b", "main");
  writeFileSync(join(dir, "README.md"), "x\n");
  sh(dir, "add", "README.md");
  sh(dir, "commit", "--quiet", "-m", "init");
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * An Attempt on acme/widgets of this remote: `<run>/agent/<n>` names it, its branch is
 * atelier/start-dev/<run>.
 */
export function attemptOn(fx: RemoteFixture, attemptId: string, agent: NamedAgentSpec, over: Partial<AttemptInput> = {}): AttemptInput {
  const runId = attemptId.split("/")[0]!;
  return {
    runId,
    attemptId,
    loop: "start-dev",
    repo: "acme/widgets",
    number: 21,
    prompt: "Add hello.txt and commit it.",
    agent,
    cloneUrl: fx.url,
    token: "ghs_FixtureToken0123456789abcdefghijklmnop",
    defaultBranch: "main",
    branch: `atelier/start-dev/${runId}`,
    workspaceRoot: fx.root,
    sessions: memorySessions(runId),
    repositoryId: "1001",
    ...over,
  };
}
