import { validationFailed } from "../api-error";
import type { SimIssue, SimRepo, SimReview, SimReviewComment } from "../model";
import type { SimState } from "./sim-state";

const REVIEW_STATES = { APPROVE: "APPROVED", REQUEST_CHANGES: "CHANGES_REQUESTED", COMMENT: "COMMENTED" } as const;

export interface ReviewInput {
  event: unknown;
  body?: unknown;
  comments?: unknown;
}

function lineComment(raw: unknown, resource: string): { path: string; line: number; body: string } {
  const c = (raw ?? {}) as { path?: unknown; line?: unknown; body?: unknown };
  if (typeof c.path !== "string" || !c.path) throw validationFailed([{ resource, field: "path", code: "missing_field" }]);
  if (typeof c.line !== "number" || !Number.isInteger(c.line) || c.line < 1) throw validationFailed([{ resource, field: "line", code: "invalid", value: c.line }]);
  if (typeof c.body !== "string" || !c.body) throw validationFailed([{ resource, field: "body", code: "missing_field" }]);
  return { path: c.path, line: c.line, body: c.body };
}

/**
 * Submits a review: GitHub sends pull_request_review submitted, and pull_request_review_comment
 * created for each of its line comments. REQUEST_CHANGES and COMMENT need a body or comments.
 */
export function submitReview(state: SimState, repo: SimRepo, item: SimIssue, input: ReviewInput, authorId: number): { review: SimReview; comments: SimReviewComment[] } {
  if (!item.pull) throw validationFailed([{ resource: "PullRequestReview", field: "pull_number", code: "invalid" }]);
  const event = typeof input.event === "string" ? input.event : "";
  if (!(event in REVIEW_STATES)) throw validationFailed([{ resource: "PullRequestReview", field: "event", code: "invalid", value: input.event }]);
  const body = typeof input.body === "string" ? input.body : "";
  const lines = input.comments === undefined ? [] : Array.isArray(input.comments) ? input.comments.map((c) => lineComment(c, "PullRequestReviewComment")) : null;
  if (lines === null) throw validationFailed([{ resource: "PullRequestReview", field: "comments", code: "invalid" }]);
  if (event !== "APPROVE" && !body && lines.length === 0) {
    throw validationFailed([{ resource: "PullRequestReview", field: "body", code: "missing_field", message: "Review body is required for this event" }]);
  }
  const now = state.clock.now();
  const review: SimReview = {
    ...onPull(state, "PullRequestReview", repo, item),
    body,
    state: REVIEW_STATES[event as keyof typeof REVIEW_STATES],
    authorId,
    commitId: item.pull.headSha,
    submittedAt: now,
  };
  state.reviews.set(review.id, review);
  const comments = lines.map((l) => addReviewComment(state, repo, item, l, authorId, review.id));
  item.updatedAt = now;
  state.emit({ event: "pull_request_review", action: "submitted", repoId: repo.id, number: item.number, reviewId: review.id, senderId: authorId });
  for (const c of comments) state.emit({ event: "pull_request_review_comment", action: "created", repoId: repo.id, number: item.number, commentId: c.id, senderId: authorId });
  return { review, comments };
}

/** A single line comment outside a review (POST /pulls/{n}/comments): pull_request_review_comment created. */
export function createReviewComment(state: SimState, repo: SimRepo, item: SimIssue, raw: unknown, authorId: number): SimReviewComment {
  if (!item.pull) throw validationFailed([{ resource: "PullRequestReviewComment", field: "pull_number", code: "invalid" }]);
  const comment = addReviewComment(state, repo, item, lineComment(raw, "PullRequestReviewComment"), authorId, null);
  item.updatedAt = comment.createdAt;
  state.emit({ event: "pull_request_review_comment", action: "created", repoId: repo.id, number: item.number, commentId: comment.id, senderId: authorId });
  return comment;
}

function addReviewComment(state: SimState, repo: SimRepo, item: SimIssue, l: { path: string; line: number; body: string }, authorId: number, reviewId: number | null): SimReviewComment {
  const now = state.clock.now();
  const comment: SimReviewComment = {
    ...onPull(state, "PullRequestReviewComment", repo, item),
    reviewId,
    inReplyTo: null,
    ...l,
    authorId,
    commitId: item.pull!.headSha,
    createdAt: now,
    updatedAt: now,
  };
  state.reviewComments.set(comment.id, comment);
  return comment;
}

/** What a review and a line comment of a pull request begin with: their ids, and the pull request they are on. */
function onPull(state: SimState, kind: string, repo: SimRepo, item: SimIssue): Pick<SimReview, "id" | "nodeId" | "repoId" | "pullNumber"> {
  return { ...state.newNode(kind), repoId: repo.id, pullNumber: item.number };
}
