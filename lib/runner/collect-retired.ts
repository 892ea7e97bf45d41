import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { withCacheLock } from "../executor/workspace";
import { cachesDir, isLegacyCache, repositoryIdOfCache } from "../executor/workspace-paths";
import type { Db } from "../store/kernel/db";
import { retiredRepositoryIds } from "../store/github/repository-rows";

/**
 * What a worker keeps of a repository that is retired (deleted on GitHub, or its name taken by
 * another repository: ADR 0070) is removed: its bare cache (`cache/<id>.git`). Each worker keeps
 * its own, so each collects its own: before every Attempt it begins (a directory listing, and one
 * query only when there is something to ask). Its Runs' kept sessions are in Postgres and go with
 * the repository's retirement there (ADR 0082). Returns the repository ids whose caches went.
 */
export async function collectRetired(db: Db, root: string): Promise<string[]> {
  const names = await readdir(cachesDir(root)).catch(() => [] as string[]);
  // a cache named `<owner>__<name>.git` (before ADR 0070) is no repository's any more
  for (const legacy of names.filter(isLegacyCache)) await rm(join(cachesDir(root), legacy), { recursive: true, force: true });
  const cacheIds = names.map(repositoryIdOfCache).filter((id): id is string => id !== null);
  const retired = await retiredRepositoryIds(db, cacheIds);
  for (const id of retired) {
    const dir = join(cachesDir(root), `${id}.git`);
    await withCacheLock(dir, () => rm(dir, { recursive: true, force: true }));
  }
  return [...retired];
}
