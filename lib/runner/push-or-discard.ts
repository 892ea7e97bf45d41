import type { RunRow } from "../store/runs/run-rows";
import { discardReviewedRun, heldRefOf, pushReviewedRun } from "../store/runs/held-commits";
import { continueWithNewest, type ContinueDeps } from "./continue-with-newest";
import { pullRequestBase } from "./pull-request-base";
import type { RunnerGitHub } from "./runner-deps";

/**
 * A writer's decision on a Reviewing Run's held commits (ADR 0058), as the dashboard's Push and
 * Discard call it. Push: the branch is pointed at the held commits (REST, leased on the branch as
 * the Attempt found it) and the pull request opened as a finished Attempt would have; only now
 * can a workflow start. Discard: the held ref is deleted. Either way the Run closes, the held
 * ref goes, and an Event queued behind the Run gets its turn. Both run under the Run's row lock,
 * so a second press (or the other button) finds the Run moved on: 409.
 */

export interface ReviewDeps extends ContinueDeps {
  github: Pick<RunnerGitHub, "mintToken" | "publishPullRequest" | "setBranch" | "deleteRef">;
}

export async function pushReviewed(deps: ReviewDeps, runId: string, actor: string): Promise<RunRow> {
  const run = await pushReviewedRun(deps.db, runId, actor, async (locked, held) => {
    await deps.github.setBranch({ repo: locked.repo, branch: held.branch, sha: held.headSha, expected: held.branchSha });
    const access = await deps.github.mintToken(locked.repo);
    const pr = await deps.github.publishPullRequest({
      repo: locked.repo,
      head: held.branch,
      base: await pullRequestBase(deps.db, locked.repo, access),
      title: held.pullRequestTitle ?? `Atelier: ${locked.loop}`,
      body: held.pullRequestBody,
      runId: locked.id,
      loop: locked.loop,
      itemNumber: locked.number,
      token: access.token,
    });
    return { branch: held.branch, headSha: held.headSha, pullRequestNumber: pr?.number ?? null };
  });
  await dropHeldRef(deps, run);
  await continueWithNewest(deps, { loop: run.loop, itemKey: run.item_key });
  return run;
}

export async function discardReviewed(deps: ReviewDeps, runId: string, actor: string): Promise<RunRow> {
  const run = await discardReviewedRun(deps.db, runId, actor, (locked, held) => deps.github.deleteRef(locked.repo, held.ref));
  await continueWithNewest(deps, { loop: run.loop, itemKey: run.item_key });
  return run;
}

/** The held ref of a pushed Run, deleted: the branch holds the commits now. A failure leaves a ref no workflow reads; it is logged. */
async function dropHeldRef(deps: ReviewDeps, run: RunRow): Promise<void> {
  await deps.github.deleteRef(run.repo, heldRefOf(run.id)).catch((err: unknown) => deps.log?.warn({ run_id: run.id, err: String(err) }, "could not delete the held ref of a pushed Run"));
}
