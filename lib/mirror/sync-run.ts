import type { Db } from "../store/kernel/db";
import { ensureRunMirror, recordCheckRun, recordComment, recordSynced, withRunMirrorLock, type RunMirror, type SyncedState } from "../store/github/run-mirrors";
import { showCheckRun, type ShownCheckRun } from "./shown-check-run";
import { callGitHub, GitHubCallError, type InstallationClients } from "./github-client";
import { planMirror } from "./mirror-plan";
import { showRunComment } from "./run-comment";
import { readRunSnapshot } from "./run-snapshot";

/** What the mirror needs: Postgres, an installation's GitHub client, and where the dashboard is. */
export interface MirrorDeps {
  db: Db;
  github: InstallationClients;
  /** ATELIER_PUBLIC_URL: the Run pages the check runs and comments link to. */
  publicUrl: string;
}

/** none: nothing to show there; unchanged: GitHub already shows it; written: a call was made. */
export type PartOutcome = "none" | "unchanged" | "written";

export type SyncOutcome = { tag: "NoRun" } | { tag: "Synced"; check: PartOutcome; comment: PartOutcome };

function shownCheckRun(mirror: RunMirror): ShownCheckRun | null {
  return mirror.checkRunId !== null && mirror.checkSha !== null
    ? { id: mirror.checkRunId, sha: mirror.checkSha, completed: mirror.synced.checkCompleted }
    : null;
}

/**
 * Makes GitHub show the Run as Postgres has it: its check run on the pull request's head and
 * its comment on the Item, each created once and then updated in place. A view that did not
 * change since the last sync makes no API call. What each call wrote (a new id, the hash) is
 * stored right after it; a GitHubCallError says whether trying again later may work. A refusal
 * that will not go away (no installation, a 4xx) still marks this version of the Run as
 * handled, so the sweep does not retry it until the Run changes again.
 */
export async function syncRunMirror(deps: MirrorDeps, runId: string): Promise<SyncOutcome> {
  return withRunMirrorLock(deps.db, runId, async () => {
    const snapshot = await readRunSnapshot(deps.db, runId);
    if (!snapshot) return { tag: "NoRun" };
    const mirror = await ensureRunMirror(deps.db, runId);
    const plan = planMirror(snapshot, mirror, deps.publicUrl);
    const synced: SyncedState = { ...mirror.synced };
    const check = plan.check && plan.check.hash !== synced.check ? plan.check : null;
    const comment = plan.comment && plan.comment.hash !== synced.comment ? plan.comment : null;
    try {
      if (check || comment) {
        const installationId = snapshot.installationId;
        if (installationId === null) {
          throw new GitHubCallError(false, null, null, `The repository ${snapshot.repo} is not registered with an installation of the GitHub App, so Run ${runId} cannot show on GitHub.`);
        }
        const client = await callGitHub("get an installation token", () => deps.github(installationId));
        if (check) {
          const { shown } = await showCheckRun(client, snapshot.repo, shownCheckRun(mirror), check.sha, check.view);
          synced.check = check.hash;
          synced.checkCompleted = shown.completed;
          await recordCheckRun(deps.db, runId, shown.id, shown.sha, synced);
        }
        if (comment) {
          const id = await showRunComment(client, snapshot.repo, comment.number, runId, mirror.commentId, comment.body);
          synced.comment = comment.hash;
          await recordComment(deps.db, runId, id, synced);
        }
      }
    } catch (err) {
      if (err instanceof GitHubCallError && !err.retryable) await recordSynced(deps.db, runId, synced, snapshot.version);
      throw err;
    }
    await recordSynced(deps.db, runId, synced, snapshot.version);
    return {
      tag: "Synced",
      check: plan.check === null ? "none" : check ? "written" : "unchanged",
      comment: plan.comment === null ? "none" : comment ? "written" : "unchanged",
    };
  });
}

