import type { CommentFacts, CommentKind, CommentRef } from "../loops/comment-context";
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
  return commentFacts(ref.kind, data);
}

function commentFacts(kind: CommentKind, data: RestComment): CommentFacts {
  return {
    kind,
    id: Number(data.id),
    body: data.body ?? "",
    author: data.user?.login ?? null,
    authorAssociation: data.author_association ?? null,
    url: data.html_url ?? "",
    reviewState: kind === "review" ? (data.state ?? null) : null,
    path: kind === "review_comment" ? (data.path ?? null) : null,
    line: kind === "review_comment" ? (data.line ?? data.original_line ?? null) : null,
  };
}

/** A comment a repository listing gave, with the Item it is on. */
export interface ListedComment {
  number: number;
  comment: CommentFacts;
}

/** The most pages a comment listing reads in one cycle (100 comments a page). */
const MAX_COMMENT_PAGES = 10;

const LISTINGS = {
  issue_comment: { route: "GET /repos/{owner}/{repo}/issues/comments", itemUrl: "issue_url" },
  review_comment: { route: "GET /repos/{owner}/{repo}/pulls/comments", itemUrl: "pull_request_url" },
} as const;

/**
 * The issue and pull request comments (`issue_comment`), or the review comments on lines
 * (`review_comment`), of a whole repository written or edited at or after `since`, oldest change
 * first: one request per 100 of them.
 */
export async function listCommentsSince(octokit: Octokit, fullName: string, kind: keyof typeof LISTINGS, since: Date): Promise<ListedComment[]> {
  const { owner, repo } = splitRepo(fullName);
  const { route, itemUrl } = LISTINGS[kind];
  const out: ListedComment[] = [];
  for (let page = 1; page <= MAX_COMMENT_PAGES; page++) {
    const { data } = await octokit.request(route, { owner, repo, sort: "updated", direction: "asc", since: since.toISOString(), per_page: 100, page });
    for (const raw of data as (RestComment & Record<string, unknown>)[]) {
      const number = Number(/\/(\d+)$/.exec(String(raw[itemUrl] ?? ""))?.[1]);
      if (Number.isSafeInteger(number) && number > 0) out.push({ number, comment: commentFacts(kind, raw) });
    }
    if (data.length < 100) break;
  }
  return out;
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
