import type { Octokit } from "./app-client";
import { splitRepo } from "./repo-name";

export interface PullRequestRef {
  number: number;
  url: string;
  headSha: string;
  /** true when this call opened it, false when it updated an open one. */
  created: boolean;
}

/**
 * Opens the pull request of `branch`, or updates the title and body of the one already open
 * with that head (an Attempt after a retry pushes to the same branch).
 */
export async function openOrUpdatePullRequest(
  octokit: Octokit,
  fullName: string,
  input: { branch: string; title: string; body: string; base?: string; draft?: boolean },
): Promise<PullRequestRef> {
  const { owner, repo } = splitRepo(fullName);
  const { data: open } = await octokit.request("GET /repos/{owner}/{repo}/pulls", {
    owner,
    repo,
    head: `${owner}:${input.branch}`,
    state: "open",
    per_page: 1,
  });
  const existing = open[0];
  if (existing) {
    const { data } = await octokit.request("PATCH /repos/{owner}/{repo}/pulls/{pull_number}", {
      owner,
      repo,
      pull_number: existing.number,
      title: input.title,
      body: input.body,
    });
    return { number: data.number, url: data.html_url, headSha: data.head.sha, created: false };
  }
  const base = input.base ?? (await octokit.request("GET /repos/{owner}/{repo}", { owner, repo })).data.default_branch;
  const { data } = await octokit.request("POST /repos/{owner}/{repo}/pulls", {
    owner,
    repo,
    head: input.branch,
    base,
    title: input.title,
    body: input.body,
    ...(input.draft ? { draft: true } : {}),
  });
  return { number: data.number, url: data.html_url, headSha: data.head.sha, created: true };
}
