import { requireRepoPermission, requireViewer, seesRepository, type Level } from "../auth/authorize";
import type { Viewer } from "../auth/viewer";
import { NotFoundError } from "../errors";
import type { Db } from "../store/kernel/db";
import { repoOfRun } from "../store/reads/run-detail-read";

/**
 * Authorization before lookup, for everything reached by a Run's id: a Run of a repository the
 * viewer cannot see is answered exactly as a Run that does not exist (404 `run_not_found`), so a
 * stranger learns nothing from guessing ids. Seeing takes explicit access (seesRepository); a
 * write asks GitHub for the viewer's role afresh (403 without write).
 */
export async function authorizeRun(db: Db, viewer: Viewer | null, runId: string, level: Level): Promise<{ who: Viewer; repo: string }> {
  const who = requireViewer(viewer);
  const repo = await repoOfRun(db, runId);
  if (!repo || !(await seesRepository(who, repo))) throw new NotFoundError("run_not_found", `There is no Run ${runId}.`);
  if (level === "write") await requireRepoPermission(who, repo, "write");
  return { who, repo };
}
