import { notFound, validationFailed } from "../api-error";
import type { SimIssue, SimRepo } from "../model";
import type { SimReviewComment } from "../model";
import type { SimState } from "./sim-state";

/**
 * Review threads: a line comment starts one, replies join it (`POST …/pulls/{n}/comments/{id}/replies`),
 * and a person resolves or unresolves it (`pull_request_review_thread` resolved / unresolved).
 * GitHub shows threads only in GraphQL (`PullRequest.reviewThreads`); REST has their comments.
 */

export interface SimReviewThread {
  /** the first comment's id (the thread's identity here) */
  id: number;
  nodeId: string;
  root: SimReviewComment;
  comments: SimReviewComment[];
  resolved: boolean;
  /** whether the thread's line is no longer in the pull request's diff (its head moved on) */
  outdated: boolean;
}

/** The threads of a pull request, oldest first, each with its comments oldest first. */
export function threadsOf(state: SimState, repo: SimRepo, item: SimIssue): SimReviewThread[] {
  const comments = [...state.reviewComments.values()].filter((c) => c.repoId === repo.id && c.pullNumber === item.number).sort((a, b) => a.id - b.id);
  return comments
    .filter((c) => c.inReplyTo === null)
    .map((root) => ({
      id: root.id,
      nodeId: state.nodeId("PullRequestReviewThread", root.id),
      root,
      comments: comments.filter((c) => c.id === root.id || c.inReplyTo === root.id),
      resolved: state.resolvedThreads.has(root.id),
      outdated: item.pull !== null && root.commitId !== item.pull.headSha,
    }));
}

function threadRoot(state: SimState, repo: SimRepo, item: SimIssue, commentId: number): SimReviewComment {
  const comment = state.reviewComments.get(commentId);
  if (!comment || comment.repoId !== repo.id || comment.pullNumber !== item.number) throw notFound();
  return comment.inReplyTo === null ? comment : state.reviewComments.get(comment.inReplyTo)!;
}

/** A reply in the thread of `commentId`: pull_request_review_comment created. */
export function replyToReviewComment(state: SimState, repo: SimRepo, item: SimIssue, commentId: number, body: unknown, authorId: number): SimReviewComment {
  if (typeof body !== "string" || !body) throw validationFailed([{ resource: "PullRequestReviewComment", field: "body", code: "missing_field" }]);
  const root = threadRoot(state, repo, item, commentId);
  const now = state.clock.now();
  const reply: SimReviewComment = {
    ...root,
    ...state.newNode("PullRequestReviewComment"),
    reviewId: null,
    inReplyTo: root.id,
    body,
    authorId,
    commitId: item.pull!.headSha,
    createdAt: now,
    updatedAt: now,
  };
  state.reviewComments.set(reply.id, reply);
  item.updatedAt = now;
  state.emit({ event: "pull_request_review_comment", action: "created", repoId: repo.id, number: item.number, commentId: reply.id, senderId: authorId });
  return reply;
}

/** Resolves (or unresolves) the thread of `commentId`; a change only when it was not so already. */
export function setThreadResolved(state: SimState, repo: SimRepo, item: SimIssue, commentId: number, resolved: boolean, userId: number): void {
  const root = threadRoot(state, repo, item, commentId);
  if (state.resolvedThreads.has(root.id) === resolved) return;
  if (resolved) state.resolvedThreads.set(root.id, userId);
  else state.resolvedThreads.delete(root.id);
  state.emit({ event: "pull_request_review_thread", action: resolved ? "resolved" : "unresolved", repoId: repo.id, number: item.number, threadId: root.id, senderId: userId });
}
