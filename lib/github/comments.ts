import type { CommentFacts, CommentRef } from "../loops/comment-context";
import type { Octokit } from "./app-client";
import { httpStatusOf } from "./rate-limit-errors";
import { splitRepo } from "./repo-name";

interface RestComment {
  id: number;
  body?: string | null;
  user?: { login?: string } | null;
  author_association?: string;
  html_url?: string;
  state?: string;
  path?: string;
  line?: number | null;
  original_line?: number | null;
}

/**
 * Reads the comment from GitHub as it is now (never from the webhook's payload, which anyone
 * who can forge a delivery could write and which may be older than an edit): an issue comment,
 * a review comment, or a review of pull request `number`. null when it is gone.
 */
export async function readComment(octokit: Octokit, fullName: string, number: number, ref: CommentRef): Promise<CommentFacts | null> {
  const { owner, repo } = splitRepo(fullName);
  let data: RestComment;
  try {
    if (ref.kind === "issue_comment") {
      data = (await octokit.request("GET /repos/{owner}/{repo}/issues/comments/{comment_id}", { owner, repo, comment_id: ref.id })).data as RestComment;
    } else if (ref.kind === "review_comment") {
      data = (await octokit.request("GET /repos/{owner}/{repo}/pulls/comments/{comment_id}", { owner, repo, comment_id: ref.id })).data as RestComment;
    } else {
      data = (await octokit.request("GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}", { owner, repo, pull_number: number, review_id: ref.id }))
        .data as RestComment;
    }
  } catch (err) {
    if (httpStatusOf(err)?.status === 404) return null;
    throw err;
  }
  return {
    kind: ref.kind,
    id: Number(data.id),
    body: data.body ?? "",
    author: data.user?.login ?? null,
    authorAssociation: data.author_association ?? null,
    url: data.html_url ?? "",
    reviewState: ref.kind === "review" ? (data.state ?? null) : null,
    path: ref.kind === "review_comment" ? (data.path ?? null) : null,
    line: ref.kind === "review_comment" ? (data.line ?? data.original_line ?? null) : null,
  };
}

/** The reaction Atelier leaves on a comment it acts on: seen, at once. */
export const ACK_REACTION = "eyes";

/**
 * Reacts to the comment (GitHub answers 200 for a reaction that exists, so a redelivery adds
 * none). A review has no reactions on GitHub: nothing to do.
 */
export async function acknowledgeComment(octokit: Octokit, fullName: string, ref: CommentRef): Promise<void> {
  const { owner, repo } = splitRepo(fullName);
  if (ref.kind === "issue_comment") {
    await octokit.request("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", { owner, repo, comment_id: ref.id, content: ACK_REACTION });
  } else if (ref.kind === "review_comment") {
    await octokit.request("POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions", { owner, repo, comment_id: ref.id, content: ACK_REACTION });
  }
}
