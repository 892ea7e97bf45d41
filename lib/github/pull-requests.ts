import type { Octokit } from "./app-client";
import { splitRepo } from "./repo-name";

export interface PullRequestRef {
  number: number;
  url: string;
  headSha: string;
  /** true when this call opened it, false when it updated an open one. */
  created: boolean;
}

const DRAFT_MUTATIONS = {
  true: "mutation($id: ID!) { convertPullRequestToDraft(input: { pullRequestId: $id }) { pullRequest { isDraft } } }",
  false: "mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }",
} as const;

/** Turns an open pull request into a draft, or marks it ready for review (GraphQL only: REST cannot). */
async function setDraft(octokit: Octokit, nodeId: string, draft: boolean): Promise<void> {
  const { data } = await octokit.request("POST /graphql", { query: DRAFT_MUTATIONS[`${draft}`], variables: { id: nodeId } });
  const errors = (data as { errors?: { message: string }[] }).errors;
  if (errors?.length) throw new Error(`GitHub refused to ${draft ? "convert the pull request to a draft" : "mark the pull request ready for review"}: ${errors.map((e) => e.message).join("; ")}`);
}

/**
 * Opens the pull request of `branch`, or updates the title and body of the one already open
 * with that head (an Attempt after a retry pushes to the same branch). `draft`: open it as a
 * draft (true), or turn the open one into a draft (true) or ready for review (false); absent:
 * as it is.
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
    if (input.draft !== undefined && existing.draft !== input.draft) await setDraft(octokit, existing.node_id, input.draft);
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
