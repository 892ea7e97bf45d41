import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { AttemptBox } from "./agent-sandbox/box";
import { AttemptFailureError, BranchMovedError } from "./attempt-failure-error";
import { DEFAULT_HARVEST_LIMITS, exportAgentCommits, HARVEST_REF, type HarvestLimits } from "./export-agent-commits";
import { classifyGitError, git, GitCommandError, lastLines } from "./git";
import { pushFailure, remoteGit } from "./git-failure";
import { gitCredentialForms, Redactor } from "../secrets/redact";
import { cacheObjects, initBorrowingRepo } from "./workspace";
import { harvestDir } from "./workspace-paths";

/**
 * Collects what the agent made: its commits since the base and a commit of whatever files it left
 * uncommitted, both made and bundled inside a sandbox with limits (export-agent-commits.ts), taken
 * into a repository of the worker's that the agent never saw — every object fsck'd strictly on
 * the way in, and the change refused whole when it adds a gitlink, too many files or too large a
 * file (refusedContent) — then pushes from there. The
 * installation token exists only in that push's environment, once the agent's sandbox is gone.
 * The branch is ours, so a rewrite by the agent is pushed as is; the lease is the branch as it
 * was when the Attempt began, so work someone else pushed meanwhile is never overwritten.
 * Collecting and pushing are two steps, so that verify can check the collected commit first.
 */

export interface HarvestCommit {
  sha: string;
  subject: string;
}

export interface Harvest {
  branch: string;
  /** Where the commits went: the branch, or the ref they are held under for review (HarvestInput.holdRef). */
  ref: string;
  /** The branch on the remote when the Attempt began (null: it did not exist): a later push of held commits leases on it. */
  remoteBranchSha: string | null;
  baseSha: string;
  headSha: string;
  commits: HarvestCommit[];
  pushed: boolean;
  /** Whether uncommitted changes were committed on the agent's behalf. */
  committedLeftovers: boolean;
  /** Why nothing of the agent's work was taken. */
  problem: string | null;
  /** Why the files it left uncommitted were not taken (its commits were). */
  leftoversRefused: string | null;
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
  /**
   * A ref outside refs/heads (and refs/tags) to push the commits to instead of the branch: no
   * workflow starts for it, so a writer reviews them first (ADR 0058). The ref is the Run's own.
   */
  holdRef?: string;
  cloneUrl: string;
  token: string;
  /** Whether the agent ran in a sandbox (see exportAgentCommits). */
  sandboxed: boolean;
  /** Masks secrets in commit subjects and error messages. */
  redactor?: Redactor;
  signal?: AbortSignal;
  /** Subject of the commit made from uncommitted changes. */
  leftoverMessage?: string;
  /** What is taken of the agent's work at most (DEFAULT_HARVEST_LIMITS). */
  limits?: HarvestLimits;
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

/**
 * fsck, strictly (every warning an error: a `.git` entry, `..`, a zero-padded mode…), of every
 * object the agent's commits brought: git 2.39's fetch from a bundle checks none of them, whatever
 * transfer.fsckObjects says, so they are packed again and the pack indexed with --strict.
 */
async function fsckAgentObjects(repo: string, baseSha: string, signal?: AbortSignal): Promise<void> {
  const packBase = join(repo, "agent-objects");
  const hash = (await git(["pack-objects", "--revs", "--quiet", packBase], { cwd: repo, signal, input: `refs/atelier/agent\n^${baseSha}\n` })).stdout.trim();
  try {
    await git(["index-pack", "--strict", `${packBase}-${hash}.pack`], { cwd: repo, signal });
  } finally {
    for (const ext of ["pack", "idx"]) await rm(`${packBase}-${hash}.${ext}`, { force: true });
  }
}

/** The new mode and object of each entry of `--raw -z` output (diff-tree or log). */
function rawChanges(stdout: string): { mode: string; sha: string }[] {
  const changes: { mode: string; sha: string }[] = [];
  const fields = stdout.split("\0");
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!.replace(/^\n+/, "");
    if (!field.startsWith(":")) continue;
    const [, mode = "", , sha = ""] = field.slice(1).split(" ");
    changes.push({ mode, sha });
    i++; // the path
  }
  return changes;
}

/**
 * What the agent's work holds, checked before anything is pushed: a gitlink in any of its
 * commits (a submodule commit, pointing anywhere), more changed files than the limit or a file
 * larger than it in what it changes from the base. The reason, or null.
 */
async function refusedContent(repo: string, baseSha: string, head: string, limits: HarvestLimits, signal?: AbortSignal): Promise<string | null> {
  const history = await git(["log", "-z", "--raw", "--no-renames", "--no-abbrev", "--diff-merges=separate", "--format=tformat:", `${baseSha}..${head}`], { cwd: repo, signal });
  if (rawChanges(history.stdout).some((c) => c.mode === "160000")) return "it adds a gitlink (a submodule commit), which is never taken from an agent";
  const changed = rawChanges((await git(["diff-tree", "-r", "-z", "--no-renames", baseSha, head], { cwd: repo, signal })).stdout);
  if (changed.length > limits.maxEntries) return `it changes more than ${limits.maxEntries} files`;
  const blobs = changed.filter((c) => c.mode.startsWith("10") || c.mode === "120000").map((c) => c.sha);
  if (blobs.length > 0) {
    const sizes = (await git(["cat-file", "--batch-check=%(objectsize)"], { cwd: repo, signal, input: blobs.join("\n") + "\n" })).stdout;
    if (sizes.split("\n").some((line) => Number(line) > limits.maxFileBytes)) return `it holds a file larger than ${limits.maxFileBytes} bytes`;
  }
  return null;
}

/**
 * Takes the agent's work into the harvest repository (its commits, and a commit of what it left
 * uncommitted) without pushing it: `headSha` is the commit that will be pushed. Again after a
 * resumed round: the agent's clone holds everything it did since the base.
 */
export async function collectHarvest(input: HarvestInput): Promise<Harvest> {
  const redactor = (input.redactor ?? new Redactor([])).with(gitCredentialForms(input.token));
  const repo = harvestDir(input.dir);
  await rm(repo, { recursive: true, force: true });
  await initBorrowingRepo(repo, cacheObjects(input.cacheDir), true);
  const limits = input.limits ?? DEFAULT_HARVEST_LIMITS;
  const exported = await exportAgentCommits({
    name: input.name,
    box: input.box,
    cacheDir: input.cacheDir,
    baseSha: input.baseSha,
    sandboxed: input.sandboxed,
    leftoverMessage: input.leftoverMessage ?? `Atelier: uncommitted changes from ${input.attemptId}`,
    exclude: (input.exclude ?? []).map(excludePattern),
    limits,
    signal: input.signal,
  });
  let headSha = input.baseSha;
  let problem = exported.problem;
  if (exported.bundle) {
    try {
      await git(["fetch", "--quiet", "--no-tags", exported.bundle, `+${HARVEST_REF}:refs/atelier/agent`], { cwd: repo, signal: input.signal });
      await fsckAgentObjects(repo, input.baseSha, input.signal);
      const fetched = (await git(["rev-parse", "--verify", "refs/atelier/agent^{commit}"], { cwd: repo, signal: input.signal })).stdout.trim();
      const refused = await refusedContent(repo, input.baseSha, fetched, limits, input.signal);
      if (refused) problem = `the agent's work was refused: ${refused}`;
      else headSha = fetched;
    } catch (err) {
      if (input.signal?.aborted) throw err;
      problem = `the agent's work was refused (${err instanceof GitCommandError ? lastLines(err.stderr, 2) : String(err)})`;
    }
  } else if (exported.head) {
    headSha = exported.head;
  }
  const committedLeftovers = exported.leftovers !== null && headSha === exported.leftovers;
  const commits = (await commitsBetween(repo, input.baseSha, headSha, input.signal)).map((c) => ({
    sha: c.sha,
    subject: redactor.redact(c.subject),
  }));
  return {
    branch: input.branch,
    ref: input.holdRef ?? `refs/heads/${input.branch}`,
    remoteBranchSha: input.remoteBranchSha,
    baseSha: input.baseSha,
    headSha,
    commits,
    pushed: false,
    committedLeftovers,
    problem,
    leftoversRefused: exported.leftoversRefused,
  };
}

/**
 * Pushes a collected harvest's head to its ref: the Run's branch, leased on the branch as the
 * Attempt found it, or the ref it is held under for review (the Run's alone: an automatic retry
 * replaces it). Nothing when it has no commit.
 */
export async function pushHarvest(input: HarvestInput, collected: Harvest): Promise<Harvest> {
  if (collected.commits.length === 0) return collected;
  const redactor = (input.redactor ?? new Redactor([])).with(gitCredentialForms(input.token));
  const { ref } = collected;
  const lease = input.holdRef ? [] : [`--force-with-lease=${ref}:${input.remoteBranchSha ?? ""}`];
  const push = ["push", "--no-verify", "--quiet", ...lease, input.cloneUrl, `${input.holdRef ? "+" : ""}${collected.headSha}:${ref}`];
  await remoteGit(push, { cwd: harvestDir(input.dir), token: input.token, remoteUrl: input.cloneUrl, signal: input.signal }, (err) => {
    const failure = pushFailure(err, redactor, input.branch);
    return err instanceof GitCommandError && classifyGitError(err.stderr) === "rejected" ? new BranchMovedError(failure) : new AttemptFailureError(failure);
  });
  return { ...collected, pushed: true };
}

/** Collects the agent's work and pushes it. */
export async function harvest(input: HarvestInput): Promise<Harvest> {
  return pushHarvest(input, await collectHarvest(input));
}
