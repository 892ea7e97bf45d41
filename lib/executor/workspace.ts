import { hostname } from "node:os";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { agentFailure, defectFailure } from "../engine/failure";
import { AttemptFailureError } from "./attempt-failure-error";
import { git } from "./git";
import { fetchFailure } from "./git-failure";
import { processStartTime } from "./process-group";
import { gitCredentialForms, Redactor } from "./redact";
import { attemptsDir, cacheDir, metaFile, resultFile, sanitizeName, worktreeDir, worktreesDir } from "./workspace-paths";

/**
 * An Attempt's checkout: a per-repository bare clone under the workspace root, fetched before
 * each Attempt, and a detached worktree of it at the Attempt's base. The base is the Run's
 * branch when the remote has it (a retry continues from the pushed work), else the default
 * branch. The token reaches git only through the environment of the one command that needs it.
 */

export interface WorkspaceRequest {
  root: string;
  /** owner/name */
  repo: string;
  /** https URL without credentials (file:// in tests). */
  cloneUrl: string;
  token: string;
  defaultBranch: string;
  /** The Run's branch, e.g. atelier/<loop>/<number>. */
  branch: string;
  runId: string;
  attemptId: string;
  signal?: AbortSignal;
}

export interface WorkspaceBase {
  kind: "branch" | "default";
  /** The branch name the base came from. */
  ref: string;
  sha: string;
}

/** Written before the worktree exists, so recovery can always tell what a worktree is. */
export interface WorktreeMeta {
  version: 1;
  name: string;
  runId: string;
  attemptId: string;
  repo: string;
  cloneUrl: string;
  branch: string;
  base: WorkspaceBase;
  /** The Run's branch on the remote when the Attempt began (null: absent); a push leases it. */
  remoteBranchSha: string | null;
  cacheDir: string;
  worktree: string;
  owner: { host: string; pid: number; startTime: string | null };
  /** The agent's process (and process group), once started. */
  agentProcess?: { pid: number; startTime: string | null };
  createdAt: string;
}

export interface Workspace extends WorktreeMeta {
  root: string;
  metaFile: string;
  resultFile: string;
}

const cacheLocks = new Map<string, Promise<unknown>>();

/** Serializes work on one bare clone within this process (fetches and worktree bookkeeping). */
export async function withCacheLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const previous = cacheLocks.get(dir) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(fn);
  cacheLocks.set(dir, next);
  try {
    return await next;
  } finally {
    if (cacheLocks.get(dir) === next) cacheLocks.delete(dir);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function assertNoCredentialsInUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AttemptFailureError(defectFailure("the clone URL is not a URL"));
  }
  if (parsed.username || parsed.password) {
    throw new AttemptFailureError(defectFailure("the clone URL carries credentials; pass the token separately"));
  }
}

/** Creates the bare clone if missing and points its origin at `cloneUrl`. */
async function ensureCache(dir: string, cloneUrl: string): Promise<void> {
  if (!(await exists(join(dir, "HEAD")))) {
    await mkdir(dirname(dir), { recursive: true });
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    await git(["init", "--bare", "--quiet", tmp], { cwd: dirname(dir) });
    await git(["config", "gc.auto", "0"], { cwd: tmp });
    await git(["config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"], { cwd: tmp });
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  }
  await git(["config", "remote.origin.url", cloneUrl], { cwd: dir });
}

async function remoteRef(dir: string, branch: string): Promise<string | null> {
  const { stdout, exitCode } = await git(["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${branch}^{commit}`], {
    cwd: dir,
    okExitCodes: [1],
  });
  return exitCode === 0 ? stdout.trim() : null;
}

/** Fetches the repository's branches into its bare clone, creating it when needed (under the cache lock). */
async function fetchCache(req: Pick<WorkspaceRequest, "root" | "repo" | "cloneUrl" | "token" | "signal">): Promise<string> {
  assertNoCredentialsInUrl(req.cloneUrl);
  const dir = cacheDir(req.root, req.repo);
  const redactor = new Redactor(gitCredentialForms(req.token));
  await ensureCache(dir, req.cloneUrl);
  try {
    await git(["fetch", "--prune", "--no-tags", "--quiet", "origin"], {
      cwd: dir,
      token: req.token,
      remoteUrl: req.cloneUrl,
      signal: req.signal,
    });
  } catch (err) {
    if (req.signal?.aborted) throw err;
    throw new AttemptFailureError(fetchFailure(err, redactor, `fetching ${req.repo} failed`));
  }
  return dir;
}

/** Fetches, picks the base and adds the Attempt's detached worktree. */
export async function prepareWorkspace(req: WorkspaceRequest): Promise<Workspace> {
  const name = sanitizeName(req.attemptId);
  const dir = cacheDir(req.root, req.repo);
  return withCacheLock(dir, async () => {
    await fetchCache(req);
    const remoteBranchSha = await remoteRef(dir, req.branch);
    let base: WorkspaceBase;
    if (remoteBranchSha) {
      base = { kind: "branch", ref: req.branch, sha: remoteBranchSha };
    } else {
      const sha = await remoteRef(dir, req.defaultBranch);
      if (!sha) {
        throw new AttemptFailureError(
          agentFailure("configuration", `${req.repo} has no branch ${req.defaultBranch} to start from (is the repository empty?)`),
        );
      }
      base = { kind: "default", ref: req.defaultBranch, sha };
    }
    const ws: Workspace = {
      version: 1,
      name,
      runId: req.runId,
      attemptId: req.attemptId,
      repo: req.repo,
      cloneUrl: req.cloneUrl,
      branch: req.branch,
      base,
      remoteBranchSha,
      cacheDir: dir,
      worktree: worktreeDir(req.root, name),
      owner: { host: hostname(), pid: process.pid, startTime: processStartTime(process.pid) },
      createdAt: new Date().toISOString(),
      root: req.root,
      metaFile: metaFile(req.root, name),
      resultFile: resultFile(req.root, name),
    };
    await mkdir(attemptsDir(req.root), { recursive: true });
    await mkdir(worktreesDir(req.root), { recursive: true });
    // A worktree of the same name can only be a leftover of this same Attempt: start clean.
    await removeWorktreeUnlocked(dir, ws.worktree);
    await rm(ws.resultFile, { force: true });
    await writeFile(ws.metaFile, JSON.stringify(toMeta(ws), null, 2));
    try {
      await git(["worktree", "add", "--detach", "--quiet", ws.worktree, base.sha], { cwd: dir, signal: req.signal });
    } catch (err) {
      await removeWorktreeUnlocked(dir, ws.worktree).catch(() => undefined);
      await rm(ws.metaFile, { force: true });
      throw err;
    }
    return ws;
  });
}

/** Notes the agent's process (its group) in the metadata, so recovery can stop an orphan. */
export async function recordAgentProcess(ws: Workspace, pid: number): Promise<void> {
  ws.agentProcess = { pid, startTime: processStartTime(pid) };
  await writeFile(ws.metaFile, JSON.stringify(toMeta(ws), null, 2));
}

function toMeta(ws: Workspace): WorktreeMeta {
  const { root: _root, metaFile: _meta, resultFile: _result, ...meta } = ws;
  return meta;
}

export async function readWorktreeMeta(file: string): Promise<WorktreeMeta | null> {
  try {
    const meta = JSON.parse(await readFile(file, "utf8")) as WorktreeMeta;
    return meta && meta.version === 1 && typeof meta.worktree === "string" ? meta : null;
  } catch {
    return null;
  }
}

async function removeWorktreeUnlocked(cache: string | null, worktree: string): Promise<void> {
  if (cache && (await exists(cache))) {
    if (await exists(worktree)) {
      await git(["worktree", "remove", "--force", "--force", worktree], { cwd: cache }).catch(() => undefined);
    }
    await rm(worktree, { recursive: true, force: true });
    await git(["worktree", "prune"], { cwd: cache }).catch(() => undefined);
  } else {
    await rm(worktree, { recursive: true, force: true });
  }
}

/** Removes a worktree (and prunes its bookkeeping in the bare clone); never throws for "already gone". */
export async function removeWorktree(cache: string | null, worktree: string): Promise<void> {
  if (!cache) return removeWorktreeUnlocked(null, worktree);
  await withCacheLock(cache, () => removeWorktreeUnlocked(cache, worktree));
}

/** Removes the Attempt's worktree, its metadata and its result file. */
export async function removeWorkspace(ws: Pick<Workspace, "cacheDir" | "worktree" | "metaFile" | "resultFile">): Promise<void> {
  await removeWorktree(ws.cacheDir, ws.worktree);
  await rm(ws.resultFile, { force: true });
  await rm(ws.metaFile, { force: true });
}
