import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AttemptBox } from "./agent-sandbox/box";
import { AttemptFailureError, BranchMovedError } from "./attempt-failure-error";
import { exportAgentCommits } from "./export-agent-commits";
import { AGENT_IDENTITY, classifyGitError, git, GitCommandError } from "./git";
import { pushFailure, remoteGit } from "./git-failure";
import { gitCredentialForms, Redactor } from "../secrets/redact";
import { cacheObjects, initBorrowingRepo } from "./workspace";
import { harvestDir } from "./workspace-paths";

/**
 * Collects what the agent made: its commits since the base, taken out of its clone as a bundle
 * (export-agent-commits.ts) into a repository of the worker's that the agent never saw, plus a
 * commit there of whatever files it left uncommitted (read from its clone as plain files, by
 * the worker's git with the harvest repository's config only); then pushes from there. The
 * installation token exists only in that push's environment, once the agent's sandbox is gone.
 * The branch is ours, so a rewrite by the agent is pushed as is; the lease is the branch as it
 * was when the Attempt began, so work someone else pushed meanwhile is never overwritten.
 */

export interface HarvestCommit {
  sha: string;
  subject: string;
}

export interface Harvest {
  branch: string;
  baseSha: string;
  headSha: string;
  commits: HarvestCommit[];
  pushed: boolean;
  /** Whether uncommitted changes were committed on the agent's behalf. */
  committedLeftovers: boolean;
  /** Why the agent's own history was not used (its files were still harvested). */
  problem: string | null;
}

export interface HarvestInput {
  /** The Attempt's sanitized name. */
  name: string;
  /** The Attempt's directory. */
  dir: string;
  box: AttemptBox;
  cacheDir: string;
  attemptId: string;
  baseSha: string;
  branch: string;
  /** The branch on the remote when the Attempt began; null when it did not exist. */
  remoteBranchSha: string | null;
  cloneUrl: string;
  token: string;
  /** Whether the agent ran in a sandbox (see exportAgentCommits). */
  sandboxed: boolean;
  /** Masks secrets in commit subjects and error messages. */
  redactor?: Redactor;
  signal?: AbortSignal;
  /** Subject of the commit made from uncommitted changes. */
  leftoverMessage?: string;
  /** Paths of the checkout never committed from what the agent left (the environment's cache paths). */
  exclude?: readonly string[];
}

/** A path of the checkout as an anchored gitignore pattern, its special characters escaped. */
export function excludePattern(path: string): string {
  const clean = path.split("/").filter((p) => p && p !== ".").join("/");
  return `/${clean.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`)}`;
}

/** Commits from `baseSha` (excluded) to `head`, oldest first. */
async function commitsBetween(repo: string, baseSha: string, head: string, signal?: AbortSignal): Promise<HarvestCommit[]> {
  const { stdout } = await git(["log", "--reverse", "--format=%H%x09%s", `${baseSha}..${head}`], { cwd: repo, signal });
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      return { sha: line.slice(0, tab), subject: line.slice(tab + 1) };
    });
}

/** The files of the agent's clone, committed on `head` when they differ from it; the new head. */
async function commitLeftovers(repo: string, worktree: string, head: string, message: string, exclude: readonly string[], signal?: AbortSignal): Promise<string> {
  const env = { GIT_INDEX_FILE: join(repo, "harvest.index"), ...AGENT_IDENTITY };
  if (exclude.length) {
    await mkdir(join(repo, "info"), { recursive: true });
    await writeFile(join(repo, "info", "exclude"), `${exclude.map(excludePattern).join("\n")}\n`);
  }
  const tree = ["--git-dir", repo, "--work-tree", worktree];
  await git([...tree, "read-tree", head], { cwd: repo, env, signal });
  await git([...tree, "add", "--all", "--", "."], { cwd: worktree, env, signal });
  const written = (await git([...tree, "write-tree"], { cwd: repo, env, signal })).stdout.trim();
  const before = (await git(["rev-parse", `${head}^{tree}`], { cwd: repo, signal })).stdout.trim();
  if (written === before) return head;
  return (await git(["commit-tree", written, "-p", head, "-m", message], { cwd: repo, env, signal })).stdout.trim();
}

export async function harvest(input: HarvestInput): Promise<Harvest> {
  const redactor = (input.redactor ?? new Redactor([])).with(gitCredentialForms(input.token));
  const repo = harvestDir(input.dir);
  await rm(repo, { recursive: true, force: true });
  await initBorrowingRepo(repo, cacheObjects(input.cacheDir), true);
  const exported = await exportAgentCommits({
    name: input.name,
    box: input.box,
    cacheDir: input.cacheDir,
    baseSha: input.baseSha,
    sandboxed: input.sandboxed,
    signal: input.signal,
  });
  let agentHead = input.baseSha;
  let problem = exported.problem;
  if (exported.bundle) {
    try {
      await git(["-c", "transfer.fsckObjects=true", "fetch", "--quiet", "--no-tags", exported.bundle, "+HEAD:refs/atelier/agent"], {
        cwd: repo,
        signal: input.signal,
      });
      agentHead = (await git(["rev-parse", "--verify", "refs/atelier/agent^{commit}"], { cwd: repo, signal: input.signal })).stdout.trim();
    } catch (err) {
      if (input.signal?.aborted) throw err;
      problem = `the agent's commits were refused (${err instanceof GitCommandError ? err.stderr.trim().split("\n").pop() : String(err)})`;
    }
  } else if (exported.head) {
    agentHead = exported.head;
  }
  const headSha = await commitLeftovers(
    repo,
    input.box.worktree,
    agentHead,
    input.leftoverMessage ?? `Atelier: uncommitted changes from ${input.attemptId}`,
    input.exclude ?? [],
    input.signal,
  );
  const committedLeftovers = headSha !== agentHead;
  const commits = (await commitsBetween(repo, input.baseSha, headSha, input.signal)).map((c) => ({
    sha: c.sha,
    subject: redactor.redact(c.subject),
  }));
  const result: Harvest = { branch: input.branch, baseSha: input.baseSha, headSha, commits, pushed: false, committedLeftovers, problem };
  if (commits.length === 0) return result;
  const ref = `refs/heads/${input.branch}`;
  const push = ["push", "--no-verify", "--quiet", `--force-with-lease=${ref}:${input.remoteBranchSha ?? ""}`, input.cloneUrl, `${headSha}:${ref}`];
  await remoteGit(push, { cwd: repo, token: input.token, remoteUrl: input.cloneUrl, signal: input.signal }, (err) => {
    const failure = pushFailure(err, redactor, input.branch);
    return err instanceof GitCommandError && classifyGitError(err.stderr) === "rejected" ? new BranchMovedError(failure) : new AttemptFailureError(failure);
  });
  return { ...result, pushed: true };
}
