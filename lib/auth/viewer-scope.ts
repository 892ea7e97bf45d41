import { visibleToViewer } from "./authorize";
import type { Viewer } from "./viewer";
import type { Db } from "../store/kernel/db";
import { registeredRepoNames } from "../store/reads/repository-list";

/**
 * The registered repositories a viewer may see: every one for an instance admin, else those
 * their GitHub token can see through the App's installations (cached 30 s by lib/auth), matched
 * by GitHub's repository id, never by name: a repository that took a freed name is not the one
 * whose Runs Atelier keeps (ADR 0070).
 */
export async function scopeRepos(db: Db, viewer: Viewer): Promise<string[]> {
  if (viewer.admin) return registeredRepoNames(db);
  const { repositories } = await visibleToViewer(viewer);
  if (!repositories.length) return [];
  return registeredRepoNames(db, repositories.map((r) => r.id));
}

/** Narrows the scope to one repository when asked (and visible), else keeps all of it. */
export function narrow(scope: string[], repo: string | null | undefined): string[] {
  if (!repo) return scope;
  const wanted = repo.toLowerCase();
  return scope.filter((r) => r === wanted);
}
