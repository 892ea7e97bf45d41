import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { sessionsRoot } from "../executor/agent-session";
import { withCacheLock } from "../executor/workspace";
import { cachesDir, isLegacyCache, repositoryIdOfCache } from "../executor/workspace-paths";
import type { Db } from "../store/kernel/db";
import { retiredRepositoryIds, runsOfRetiredRepositories } from "../store/github/repository-rows";

/**
 * What a worker keeps of a repository that is retired (deleted on GitHub, or its name taken by
 * another repository: ADR 0070) is removed: its bare cache (`cache/<id>.git`) and the agent
 * sessions kept for its Runs. Each worker keeps its own, so each collects its own: before every
 * Attempt it begins (a directory listing, and one query only when there is something to ask).
 */
export async function collectRetired(db: Db, root: string): Promise<{ caches: string[]; sessions: string[] }> {
  const names = await readdir(cachesDir(root)).catch(() => [] as string[]);
  // a cache named `<owner>__<name>.git` (before ADR 0070) is no repository's any more
  for (const legacy of names.filter(isLegacyCache)) await rm(join(cachesDir(root), legacy), { recursive: true, force: true });
  const cacheIds = names.map(repositoryIdOfCache).filter((id): id is string => id !== null);
  const retired = await retiredRepositoryIds(db, cacheIds);
  for (const id of retired) {
    const dir = join(cachesDir(root), `${id}.git`);
    await withCacheLock(dir, () => rm(dir, { recursive: true, force: true }));
  }
  const kept = (await readdir(sessionsRoot(root)).catch(() => [] as string[])).filter((name) => !name.endsWith(".new"));
  const retiredRuns = await runsOfRetiredRepositories(db, kept);
  for (const run of retiredRuns) await rm(join(sessionsRoot(root), run), { recursive: true, force: true });
  return { caches: [...retired], sessions: [...retiredRuns] };
}
