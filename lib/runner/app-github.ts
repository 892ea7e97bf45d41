import { gitHubHost } from "../github/github-user-api";
import { agentFailure } from "../engine/failure";
import { AttemptFailureError } from "../executor/attempt-failure-error";
import type { GitHubApp } from "../github/app-client";
import { httpStatusOf } from "../github/rate-limit-errors";
import { openOrUpdatePullRequest } from "../github/pull-requests";
import { deleteRef, setBranch } from "../github/branch-refs";
import type { Db } from "../store/kernel/db";
import type { RunnerGitHub } from "./runner-deps";
import { polledRepository, type RegisteredRepository } from "../store/github/repository-rows";

/**
 * The runner's GitHub through the App: a token limited to the Run's repository (and the
 * permissions an agent needs), the https clone URL that goes with the API base (github.com,
 * GitHub Enterprise's /api/v3, or the simulator, which serves git at its root), and the pull
 * request opened or updated as the installation.
 */

/** The clone URL of `repo` for an API base URL. */
export function cloneUrlFor(apiBaseUrl: string, repo: string): string {
  const url = new URL(apiBaseUrl);
  if (url.hostname === "api.github.com") return `https://github.com/${repo}.git`;
  const root = url.pathname.replace(/\/+$/, "").replace(/\/api\/v3$/, "");
  return `${url.origin}${root}/${repo}.git`;
}

async function registered(db: Db, repo: string): Promise<RegisteredRepository> {
  const found = await polledRepository(db, repo);
  if (!found) {
    throw new AttemptFailureError(
      agentFailure("configuration", `${repo} is not in an active installation of the App any more: install the App on it again, then retry the Run.`),
    );
  }
  return found;
}

export function appRunnerGitHub(app: GitHubApp, db: Db): RunnerGitHub {
  return {
    apiHost: gitHubHost(app.settings.baseUrl),
    async mintToken(repo) {
      const r = await registered(db, repo);
      // by id: the name may be another repository's on GitHub before Atelier hears of a rename
      const { token } = await app.mintRepositoryToken(r.installationId, r.id);
      return { token, repositoryId: String(r.id), cloneUrl: cloneUrlFor(app.settings.baseUrl, r.fullName), defaultBranch: r.defaultBranch };
    },
    async publishPullRequest(req) {
      const r = await registered(db, req.repo);
      try {
        const pr = await openOrUpdatePullRequest(app.installationOctokit(r.installationId), r.fullName, {
          branch: req.head,
          base: req.base,
          title: req.title,
          body: req.body,
          ...(req.draft !== undefined ? { draft: req.draft } : {}),
        });
        return { number: pr.number, url: pr.url };
      } catch (err) {
        // nothing to propose: the branch is gone or holds nothing beyond the base
        if (httpStatusOf(err)?.status === 422 && /no commits between|head.*invalid/i.test(String((err as Error).message))) return null;
        throw err;
      }
    },
    async setBranch(req) {
      const r = await registered(db, req.repo);
      await setBranch(app.installationOctokit(r.installationId), r.fullName, req.branch, req.sha, req.expected);
    },
    async deleteRef(repo, ref) {
      const r = await registered(db, repo);
      await deleteRef(app.installationOctokit(r.installationId), r.fullName, ref);
    },
  };
}
