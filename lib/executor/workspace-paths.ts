import { join } from "node:path";

/**
 * Layout of a workspace root:
 *   cache/<owner>__<name>.git     one bare clone per repository, fetched before each Attempt
 *   worktrees/<attempt>           the Attempt's detached worktree (the agent's cwd)
 *   attempts/<attempt>.json       what recovery needs to know about that worktree
 *   attempts/<attempt>.result.json  $ATELIER_RESULT_FILE, outside the worktree
 */

/** A file-name-safe form of an Attempt id (`<runId>/<step>/<n>` → `<runId>_<step>_<n>`). */
export function sanitizeName(id: string): string {
  const name = id.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  if (!name) throw new Error(`cannot name a workspace after ${JSON.stringify(id)}`);
  return name;
}

export function cacheDir(root: string, repo: string): string {
  const [owner, name, ...rest] = repo.toLowerCase().split("/");
  if (!owner || !name || rest.length > 0) throw new Error(`repository must be owner/name, got ${JSON.stringify(repo)}`);
  return join(root, "cache", `${sanitizeName(owner)}__${sanitizeName(name)}.git`);
}

export const worktreesDir = (root: string) => join(root, "worktrees");
export const attemptsDir = (root: string) => join(root, "attempts");
export const worktreeDir = (root: string, name: string) => join(worktreesDir(root), name);
export const metaFile = (root: string, name: string) => join(attemptsDir(root), `${name}.json`);
export const resultFile = (root: string, name: string) => join(attemptsDir(root), `${name}.result.json`);
