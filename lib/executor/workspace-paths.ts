import { join } from "node:path";

/**
 * Layout of a workspace root:
 *   cache/<owner>__<name>.git        one bare clone per repository, fetched before each Attempt;
 *                                    only the worker writes it, and no agent ever sees it but
 *                                    its objects, read-only, as its private clone's alternates
 *   attempts/<attempt>/meta.json     what recovery needs to know about that Attempt
 *   attempts/<attempt>/box/          what the Attempt's sandbox is given (see agent-sandbox/box.ts):
 *                                    box/worktree is the private clone, box/out the result file
 *   attempts/<attempt>/harvest.git   the repository harvest pushes from (the agent never saw it)
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

export const attemptsDir = (root: string) => join(root, "attempts");
export const attemptDir = (root: string, name: string) => join(attemptsDir(root), name);
export const metaFile = (dir: string) => join(dir, "meta.json");
export const harvestDir = (dir: string) => join(dir, "harvest.git");
/** The result file as the agent names it, inside its sandbox. */
export const SANDBOX_RESULT_FILE = "/atelier/out/result.json";
