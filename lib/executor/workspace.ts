import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { agentFailure, defectFailure } from "../engine/failure";
import { boxPaths, makeBox, type AttemptBox } from "./agent-sandbox/box";
import { SANDBOX_OBJECTS } from "./agent-sandbox/bwrap-args";
import { mountBoxQuota, unmountBoxQuota } from "./agent-sandbox/box-quota";
import { AttemptFailureError } from "./attempt-failure-error";
import { git } from "./git";
import { fetchFailure, remoteGit } from "./git-failure";
import { processStartTime } from "./process-group";
import { gitCredentialForms, Redactor } from "../secrets/redact";
import { attemptDir, attemptsDir, cacheDir, metaFile, sanitizeName } from "./workspace-paths";

/**
 * An Attempt's checkout: a per-repository bare clone under the workspace root (the cache),
 * fetched before each Attempt, and a private clone of it for the Attempt, in the Attempt's box,
 * owned by the Attempt's uid. The private clone borrows the cache's objects (read-only
 * alternates), so it costs a checkout and no copy; whatever the agent writes lands in its own
 * clone, never in the cache. The base is the Run's branch when the remote has it (a retry
 * continues from the pushed work), else the default branch. The token reaches git only
 * through the environment of the one command that needs it.
 */

export interface WorkspaceRequest {
  root: string;
  /** owner/name */
  repo: string;
  /** The repository's GitHub id: the cache is named by it (ADR 0070). */
  repositoryId: string;
  /** https URL without credentials (file:// in tests). */
  cloneUrl: string;
  token: string;
  defaultBranch: string;
  /** The Run's branch, e.g. atelier/<loop>/<number>. */
  branch: string;
  runId: string;
  attemptId: string;
  /** Whether the agent runs sandboxed: its clone then names the cache's objects by their path inside. */
  sandboxed: boolean;
  /** The box's disk quota in MiB (box-quota.ts); none when the agent runs unconfined. */
  diskMb?: number;
  /** Said when the box gets no disk quota on this host. */
  onNote?: (text: string) => void;
  signal?: AbortSignal;
}

export interface WorkspaceBase {
  kind: "branch" | "default";
  /** The branch name the base came from. */
  ref: string;
  sha: string;
}

/** Written before the clone exists, so recovery can always tell what an Attempt directory is. */
export interface WorktreeMeta {
  version: 2;
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
  /** The Attempt's own directory (meta, box, harvest repository). */
  dir: string;
  /** The private clone (the agent's cwd). */
  worktree: string;
  /** Whether the agent runs in a sandbox (harvest then reads the clone in one too). */
  sandboxed: boolean;
  owner: { host: string; pid: number; startTime: string | null };
  /** The agent's sandbox (its outer process and process group), once started. */
  agentProcess?: { pid: number; startTime: string | null };
  createdAt: string;
}

export interface Workspace extends WorktreeMeta {
  root: string;
  metaFile: string;
  box: AttemptBox;
  /** The result file, as the worker reads it. */
  resultFile: string;
}

const cacheLocks = new Map<string, Promise<unknown>>();

/** Serializes work on one bare clone within this process (fetches). */
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
    await git(["init", "--bare", "--quiet", "--template=", tmp], { cwd: dirname(dir) });
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
async function fetchCache(req: Pick<WorkspaceRequest, "root" | "repo" | "repositoryId" | "cloneUrl" | "token" | "signal">): Promise<string> {
  assertNoCredentialsInUrl(req.cloneUrl);
  const dir = cacheDir(req.root, req.repositoryId);
  const redactor = new Redactor(gitCredentialForms(req.token));
  await ensureCache(dir, req.cloneUrl);
  await remoteGit(["fetch", "--prune", "--no-tags", "--quiet", "origin"], { cwd: dir, token: req.token, remoteUrl: req.cloneUrl, signal: req.signal }, (err) =>
    new AttemptFailureError(fetchFailure(err, redactor, `fetching ${req.repo} failed`)),
  );
  return dir;
}

/** The cache's objects, which every private clone of it borrows read-only. */
export const cacheObjects = (cache: string) => join(cache, "objects");

/** A repository at `dir` whose objects are `borrowed` (and its own, for what is new). */
export async function initBorrowingRepo(dir: string, borrowed: string, bare: boolean): Promise<void> {
  await git(["init", "--quiet", "--template=", ...(bare ? ["--bare"] : []), dir], { cwd: dirname(dir) });
  const objects = bare ? join(dir, "objects") : join(dir, ".git", "objects");
  await mkdir(join(objects, "info"), { recursive: true });
  await writeFile(join(objects, "info", "alternates"), `${borrowed}\n`);
}

/** Points a clone's alternates at `borrowed` (the path its sandbox sees the cache's objects at). */
async function pointAlternatesAt(worktree: string, borrowed: string): Promise<void> {
  await writeFile(join(worktree, ".git", "objects", "info", "alternates"), `${borrowed}\n`);
}

/** Gives a tree (and all below it) to the box's uid. */
async function chownTree(box: AttemptBox, path: string): Promise<void> {
  if (!box.switchUser) return;
  await new Promise<void>((resolve, reject) => {
    const child = spawn("chown", ["-R", `${box.uid}:${box.uid}`, path], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`chown failed: ${stderr.trim()}`))));
  });
}

export interface BoxCheckout {
  /** A box made by makeBox: its worktree is created here. */
  box: AttemptBox;
  /** The repository's bare clone, whose objects the checkout borrows. */
  cache: string;
  sha: string;
  branch: string;
  sandboxed: boolean;
  /** A repository of the worker's holding `sha` when the cache does not (the harvest repository). */
  from?: string;
  signal?: AbortSignal;
}

/**
 * A private clone at `sha` in the box's worktree, borrowing the cache's objects (by the path its
 * sandbox sees them at), given to the box's uid. Only the worker's git, with no hooks and the
 * new repository's own config, touches it.
 */
export async function checkoutInBox(c: BoxCheckout): Promise<void> {
  await initBorrowingRepo(c.box.worktree, cacheObjects(c.cache), false);
  if (c.from) await git(["push", "--quiet", "--no-verify", c.box.worktree, `${c.sha}:refs/atelier/checkout`], { cwd: c.from, signal: c.signal });
  await git(["checkout", "--quiet", "-B", c.branch, c.sha], { cwd: c.box.worktree, signal: c.signal });
  if (c.from) await git(["update-ref", "-d", "refs/atelier/checkout"], { cwd: c.box.worktree, signal: c.signal });
  if (c.sandboxed) await pointAlternatesAt(c.box.worktree, SANDBOX_OBJECTS);
  await chownTree(c.box, c.box.worktree);
}

/** Fetches, picks the base and makes the Attempt's box with its private clone at the base. */
export async function prepareWorkspace(req: WorkspaceRequest): Promise<Workspace> {
  const name = sanitizeName(req.attemptId);
  const cache = cacheDir(req.root, req.repositoryId);
  const { base, remoteBranchSha } = await withCacheLock(cache, async () => {
    await fetchCache(req);
    const remoteBranchSha = await remoteRef(cache, req.branch);
    if (remoteBranchSha) return { base: { kind: "branch", ref: req.branch, sha: remoteBranchSha } as WorkspaceBase, remoteBranchSha };
    const sha = await remoteRef(cache, req.defaultBranch);
    if (!sha) {
      throw new AttemptFailureError(
        agentFailure("configuration", `${req.repo} has no branch ${req.defaultBranch} to start from (is the repository empty?)`),
      );
    }
    return { base: { kind: "default", ref: req.defaultBranch, sha } as WorkspaceBase, remoteBranchSha: null };
  });
  const dir = attemptDir(req.root, name);
  const box = boxPaths(dir, name, req.sandboxed);
  const ws: Workspace = {
    version: 2,
    name,
    runId: req.runId,
    attemptId: req.attemptId,
    repo: req.repo,
    cloneUrl: req.cloneUrl,
    branch: req.branch,
    base,
    remoteBranchSha,
    cacheDir: cache,
    dir,
    worktree: box.worktree,
    sandboxed: req.sandboxed,
    owner: { host: hostname(), pid: process.pid, startTime: processStartTime(process.pid) },
    createdAt: new Date().toISOString(),
    root: req.root,
    metaFile: metaFile(dir),
    box,
    resultFile: join(box.out, "result.json"),
  };
  await mkdir(attemptsDir(req.root), { recursive: true, mode: 0o711 });
  // A directory of the same name can only be a leftover of this same Attempt: start clean.
  await removeWorkspace(ws);
  await mkdir(dir, { mode: 0o700 });
  await chmod(dir, 0o700);
  await writeFile(ws.metaFile, JSON.stringify(toMeta(ws), null, 2));
  try {
    if (req.sandboxed && req.diskMb !== undefined) {
      await mkdir(box.dir);
      const none = await mountBoxQuota(box.dir, req.diskMb);
      if (none) req.onNote?.(none);
    }
    await makeBox(box);
    await checkoutInBox({ box, cache, sha: base.sha, branch: req.branch, sandboxed: req.sandboxed, signal: req.signal });
  } catch (err) {
    await removeWorkspace(ws);
    throw err;
  }
  return ws;
}

/** Notes the agent's sandbox process in the metadata, so recovery can stop an orphan. */
export async function recordAgentProcess(ws: Workspace, pid: number): Promise<void> {
  ws.agentProcess = { pid, startTime: processStartTime(pid) };
  await writeFile(ws.metaFile, JSON.stringify(toMeta(ws), null, 2));
}

function toMeta(ws: Workspace): WorktreeMeta {
  const { root: _root, metaFile: _meta, resultFile: _result, box: _box, ...meta } = ws;
  return meta;
}

export async function readWorktreeMeta(file: string): Promise<WorktreeMeta | null> {
  try {
    const meta = JSON.parse(await readFile(file, "utf8")) as WorktreeMeta;
    return meta && meta.version === 2 && typeof meta.worktree === "string" && typeof meta.dir === "string" ? meta : null;
  } catch {
    return null;
  }
}

/** Removes the Attempt's directory: box (its quota unmounted first), clone, result file, harvest repository and metadata. */
export async function removeWorkspace(ws: Pick<Workspace, "dir">): Promise<void> {
  await unmountBoxQuota(ws.dir);
  await rm(ws.dir, { recursive: true, force: true });
}
