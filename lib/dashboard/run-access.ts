import { requireRepoPermission, requireViewer, visibleRepositoryName, type Level } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import { NotFoundError } from "../errors";
import type { Db } from "../store/kernel/db";
import { repoOfRun } from "../store/reads/run-detail-read";

/**
 * Authorization before lookup, for everything reached by a Run's id: a Run of a repository the
 * viewer cannot see is answered exactly as a Run that does not exist (404 `run_not_found`), so a
 * stranger learns nothing from guessing ids. Seeing takes explicit access to the Run's
 * repository, matched by its GitHub id (visibleRepositoryName): a repository that took the old
 * one's name is another one (ADR 0070). A write asks GitHub for the viewer's role afresh (403
 * without write), on the repository as GitHub names it now; that name is the `repo` returned.
 */
export async function authorizeRun(db: Db, viewer: Viewer | null, runId: string, level: Level): Promise<{ who: Viewer; repo: string }> {
  const who = requireViewer(viewer);
  const run = await repoOfRun(db, runId);
  const repo = run ? await visibleRepositoryName(who, run.repositoryId, run.repo) : null;
  if (!repo) throw new NotFoundError("run_not_found", `There is no Run ${runId}.`);
  if (level === "write") await requireRepoPermission(who, repo, "write");
  return { who, repo };
}
