import type { SimCore } from "./core";
import { ZERO_SHA } from "./git-repos";
import type { SimRepo } from "./model";
import { requestSuite } from "./state/checks";
import { branchMoved } from "./state/pulls";

/**
 * A branch of `repo` moved from `before` to `after` (ZERO_SHA for a branch created or
 * deleted), however it moved — a commit of the control API or its file editor, a merge, a
 * `git push` over HTTP: its pull requests follow (`synchronize`), GitHub's `push` webhook
 * goes out with the commits git has between the two, and the App's check suite of the new
 * head is requested (`check_suite` requested).
 */
export async function branchPushed(core: SimCore, repo: SimRepo, branch: string, before: string, after: string, senderId: number): Promise<void> {
  const deleted = after === ZERO_SHA;
  if (!deleted) branchMoved(core.state, repo, branch, before, after, senderId);
  const commits = deleted ? [] : await core.git.pushedCommits(repo.gitDir, branch, before, after);
  const forced = before !== ZERO_SHA && !deleted && !(await core.git.isAncestor(repo.gitDir, before, after).catch(() => false));
  core.state.emit({ event: "push", action: "", repoId: repo.id, senderId, ref: `refs/heads/${branch}`, before, after, forced, commits });
  if (!deleted) requestSuite(core.state, repo, after, senderId);
}
