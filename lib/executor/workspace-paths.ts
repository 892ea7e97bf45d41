import { join } from "node:path";

/**
 * Layout of a workspace root:
 *   cache/<repository id>.git        one bare clone per repository, named by its GitHub id (a
 *                                    name can be freed and taken by another repository: ADR
 *                                    0070), fetched before each Attempt; only the worker writes
 *                                    it, and no agent ever sees it but its objects, read-only,
 *                                    as its private clone's alternates; removed once the
 *                                    repository is retired (collect-retired.ts)
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

const REPOSITORY_ID = /^[1-9][0-9]{0,19}$/;
const CACHE_NAME = /^([1-9][0-9]{0,19})\.git$/;

export const cachesDir = (root: string) => join(root, "cache");

/** The bare cache of the repository of GitHub id `repositoryId`. */
export function cacheDir(root: string, repositoryId: string): string {
  if (!REPOSITORY_ID.test(repositoryId)) throw new Error(`a repository's cache is named by its GitHub id, got ${JSON.stringify(repositoryId)}`);
  return join(cachesDir(root), `${repositoryId}.git`);
}

/** The repository id a cache directory's name holds; null for any other name. */
export const repositoryIdOfCache = (name: string): string | null => CACHE_NAME.exec(name)?.[1] ?? null;

/** Whether a cache directory's name is of the layout by name (`<owner>__<name>.git`) that ids replaced. */
export const isLegacyCache = (name: string): boolean => /^[^/]+__[^/]+\.git$/.test(name);

export const attemptsDir = (root: string) => join(root, "attempts");
export const attemptDir = (root: string, name: string) => join(attemptsDir(root), name);
export const metaFile = (dir: string) => join(dir, "meta.json");
export const harvestDir = (dir: string) => join(dir, "harvest.git");
/** The result file as the agent names it, inside its sandbox. */
export const SANDBOX_RESULT_FILE = "/atelier/out/result.json";
