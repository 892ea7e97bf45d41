import { AttemptFailureError, BranchMovedError } from "./attempt-failure-error";
import { AGENT_IDENTITY, classifyGitError, git, GitCommandError } from "./git";
import { pushFailure } from "./git-failure";
import { gitCredentialForms, Redactor } from "./redact";

/**
 * Collects what the agent made in its worktree: the commits since the base (after committing
 * anything it left uncommitted), pushed to the Run's branch. The branch is ours, so a rewrite by
 * the agent is pushed as is; the lease is the branch as it was when the Attempt began, so work
 * someone else pushed meanwhile is never overwritten.
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
}

export interface HarvestInput {
  worktree: string;
  attemptId: string;
  baseSha: string;
  branch: string;
  /** The branch on the remote when the Attempt began; null when it did not exist. */
  remoteBranchSha: string | null;
  cloneUrl: string;
  token: string;
  /** Masks secrets in commit subjects and error messages. */
  redactor?: Redactor;
  signal?: AbortSignal;
  /** Subject of the commit made from uncommitted changes. */
  leftoverMessage?: string;
}

/** Commits anything uncommitted in the worktree; true when a commit was made. */
export async function commitLeftovers(worktree: string, message: string, signal?: AbortSignal): Promise<boolean> {
  const { stdout } = await git(["status", "--porcelain", "--untracked-files=all"], { cwd: worktree, signal });
  if (stdout.trim() === "") return false;
  await git(["add", "--all"], { cwd: worktree, signal });
  const staged = await git(["diff", "--cached", "--quiet"], { cwd: worktree, signal, okExitCodes: [1] });
  if (staged.exitCode === 0) return false;
  await git(["commit", "--no-verify", "--quiet", "-m", message], { cwd: worktree, env: { ...AGENT_IDENTITY }, signal });
  return true;
}

/** Commits from `baseSha` (excluded) to HEAD, oldest first. */
export async function newCommits(worktree: string, baseSha: string, signal?: AbortSignal): Promise<HarvestCommit[]> {
  const { stdout } = await git(["log", "--reverse", "--format=%H%x09%s", `${baseSha}..HEAD`], { cwd: worktree, signal });
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      return { sha: line.slice(0, tab), subject: line.slice(tab + 1) };
    });
}

export async function harvest(input: HarvestInput): Promise<Harvest> {
  const redactor = (input.redactor ?? new Redactor([])).with(gitCredentialForms(input.token));
  const committedLeftovers = await commitLeftovers(
    input.worktree,
    input.leftoverMessage ?? `Atelier: uncommitted changes from ${input.attemptId}`,
    input.signal,
  );
  const commits = (await newCommits(input.worktree, input.baseSha, input.signal)).map((c) => ({
    sha: c.sha,
    subject: redactor.redact(c.subject),
  }));
  const headSha = (await git(["rev-parse", "HEAD"], { cwd: input.worktree, signal: input.signal })).stdout.trim();
  const result: Harvest = { branch: input.branch, baseSha: input.baseSha, headSha, commits, pushed: false, committedLeftovers };
  if (commits.length === 0) return result;
  const ref = `refs/heads/${input.branch}`;
  try {
    await git(
      ["push", "--no-verify", "--quiet", `--force-with-lease=${ref}:${input.remoteBranchSha ?? ""}`, input.cloneUrl, `HEAD:${ref}`],
      { cwd: input.worktree, token: input.token, remoteUrl: input.cloneUrl, signal: input.signal },
    );
  } catch (err) {
    if (input.signal?.aborted) throw err;
    const failure = pushFailure(err, redactor, input.branch);
    if (err instanceof GitCommandError && classifyGitError(err.stderr) === "rejected") throw new BranchMovedError(failure);
    throw new AttemptFailureError(failure);
  }
  return { ...result, pushed: true };
}
