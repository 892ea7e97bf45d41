import { readdir, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Failure } from "../engine/failure";
import { boxPaths } from "./agent-sandbox/box";
import { AttemptFailureError, BranchMovedError } from "./attempt-failure-error";
import { harvest, type Harvest } from "./harvest";
import { isProcessAlive, processStartTime, terminateProcessGroup } from "./process-group";
import { KILL_GRACE_MS } from "./run-agent";
import { readWorktreeMeta, removeWorkspace, type WorktreeMeta } from "./workspace";
import { attemptDir, attemptsDir, metaFile } from "./workspace-paths";

/**
 * Start-up recovery: Attempt directories an earlier process left behind. One whose clone holds
 * work beyond its base is salvaged (pushed to its Run's branch, so an operator's retry continues
 * from it), taken out as harvest always does (in a sandbox, into a repository the agent never
 * saw); any other is removed. Files of an older layout (attempts/*.json, worktrees/) are removed.
 */

export interface LeftoverWorktree {
  /** The worktree's directory name (the sanitized Attempt id). */
  name: string;
  /** The Attempt's directory. */
  path: string;
  /** null when the metadata is missing or unreadable: such a worktree can only be removed. */
  meta: WorktreeMeta | null;
  /** The owning process still runs (same host, same pid incarnation): leave it alone. */
  ownerAlive: boolean;
}

export type SalvageOutcome =
  | { tag: "Salvaged"; name: string; harvest: Harvest }
  | { tag: "Removed"; name: string; reason: string }
  | { tag: "Skipped"; name: string; reason: string }
  | { tag: "Kept"; name: string; failure: Failure };

export interface SalvageOptions {
  /** An installation token for the repository (owner/name) of the worktree. */
  token: (repo: string) => string | Promise<string>;
  signal?: AbortSignal;
}

function ownerAlive(meta: WorktreeMeta | null): boolean {
  if (!meta || meta.owner.host !== hostname()) return false;
  if (meta.owner.pid === process.pid && meta.owner.startTime === processStartTime(process.pid)) return true;
  if (!isProcessAlive(meta.owner.pid)) return false;
  // The pid is taken; it is the owner only if it is the same incarnation.
  return meta.owner.startTime === null || meta.owner.startTime === processStartTime(meta.owner.pid);
}

/** Every Attempt directory under the workspace root, with what is known of it. */
export async function listLeftoverWorktrees(root: string): Promise<LeftoverWorktree[]> {
  await rm(join(root, "worktrees"), { recursive: true, force: true });
  let entries;
  try {
    entries = await readdir(attemptsDir(root), { withFileTypes: true });
  } catch {
    return [];
  }
  for (const e of entries) if (!e.isDirectory()) await rm(join(attemptsDir(root), e.name), { force: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name);
  const leftovers: LeftoverWorktree[] = [];
  for (const name of names.sort()) {
    const dir = attemptDir(root, name);
    const meta = await readWorktreeMeta(metaFile(dir));
    leftovers.push({ name, path: dir, meta, ownerAlive: ownerAlive(meta) });
  }
  return leftovers;
}

/** An agent outlives its worker when the worker is killed outright: stop its group first. */
async function stopOrphanAgent(meta: WorktreeMeta): Promise<void> {
  const agent = meta.agentProcess;
  if (!agent || meta.owner.host !== hostname() || !isProcessAlive(agent.pid)) return;
  if (agent.startTime !== null && agent.startTime !== processStartTime(agent.pid)) return;
  await terminateProcessGroup(agent.pid, KILL_GRACE_MS);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function forget(leftover: LeftoverWorktree): Promise<void> {
  await removeWorkspace({ dir: leftover.path });
}

/**
 * Pushes a dead process's worktree to its branch when it holds new work, else removes it. A
 * push refused because the branch moved (a later Attempt pushed) removes it without pushing;
 * a push that failed for the network keeps it for the next start-up.
 */
export async function salvageOrRemove(leftover: LeftoverWorktree, options: SalvageOptions): Promise<SalvageOutcome> {
  const { name, meta } = leftover;
  if (leftover.ownerAlive) return { tag: "Skipped", name, reason: "its process is still running" };
  if (!meta) {
    await forget(leftover);
    return { tag: "Removed", name, reason: "no metadata" };
  }
  await stopOrphanAgent(meta);
  if (!(await isDirectory(meta.worktree))) {
    await forget(leftover);
    return { tag: "Removed", name, reason: "the worktree was already gone" };
  }
  let harvested: Harvest;
  try {
    harvested = await harvest({
      name: meta.name,
      dir: meta.dir,
      box: boxPaths(meta.dir, meta.name, meta.sandboxed),
      cacheDir: meta.cacheDir,
      sandboxed: meta.sandboxed,
      attemptId: meta.attemptId,
      baseSha: meta.base.sha,
      branch: meta.branch,
      remoteBranchSha: meta.remoteBranchSha,
      cloneUrl: meta.cloneUrl,
      token: await options.token(meta.repo),
      signal: options.signal,
      leftoverMessage: `Atelier: uncommitted changes from ${meta.attemptId} (salvaged)`,
    });
  } catch (err) {
    if (err instanceof AttemptFailureError) {
      if (!(err instanceof BranchMovedError) && err.failure.kind === "InfraFailure") {
        return { tag: "Kept", name, failure: err.failure };
      }
      await forget(leftover);
      return { tag: "Removed", name, reason: `not salvaged: ${err.failure.message}` };
    }
    // Not a git repository any more, or git itself failed: nothing to salvage from it.
    await forget(leftover);
    return { tag: "Removed", name, reason: `not salvaged: ${err instanceof Error ? err.message : String(err)}` };
  }
  await forget(leftover);
  if (!harvested.pushed) return { tag: "Removed", name, reason: "no commits beyond its base" };
  return { tag: "Salvaged", name, harvest: harvested };
}
