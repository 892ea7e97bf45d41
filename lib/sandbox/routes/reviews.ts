import type { components } from "@octokit/openapi-types";
import { actorId } from "../access";
import { notFound } from "../api-error";
import { asObject } from "../http-util";
import { renderReview, renderReviewComment } from "../render/review";
import { numberParam, paginate, repoOf, type RestContext, type RouteTable } from "../rest";
import { createReviewComment, submitReview } from "../state/reviews";

type Schemas = components["schemas"];

function pullOf(ctx: RestContext, level: "read" | "write") {
  const repo = repoOf(ctx, { permission: "pull_requests", level, role: "read" });
  const item = ctx.state.findItem(repo, numberParam(ctx, "pull_number"));
  if (!item?.pull) throw notFound();
  return { repo, item };
}

function listReviews(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "read");
  const reviews = [...ctx.state.reviews.values()].filter((r) => r.repoId === repo.id && r.pullNumber === item.number);
  const { page, headers } = paginate(ctx, reviews);
  return { body: page.map((r) => renderReview(ctx.render, repo, r) satisfies Schemas["pull-request-review"]), headers };
}

function getReview(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "read");
  const review = ctx.state.reviews.get(numberParam(ctx, "review_id"));
  if (!review || review.repoId !== repo.id || review.pullNumber !== item.number) throw notFound();
  return { body: renderReview(ctx.render, repo, review) };
}

function postReview(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "write");
  const body = asObject(ctx.body);
  const { review } = submitReview(ctx.state, repo, item, { event: body.event, body: body.body, comments: body.comments }, actorId(ctx.state, ctx.caller));
  return { body: renderReview(ctx.render, repo, review) };
}

function listReviewComments(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "read");
  const comments = [...ctx.state.reviewComments.values()].filter((c) => c.repoId === repo.id && c.pullNumber === item.number);
  const { page, headers } = paginate(ctx, comments);
  return { body: page.map((c) => renderReviewComment(ctx.render, repo, c) satisfies Schemas["pull-request-review-comment"]), headers };
}

function postReviewComment(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "write");
  return { status: 201, body: renderReviewComment(ctx.render, repo, createReviewComment(ctx.state, repo, item, ctx.body, actorId(ctx.state, ctx.caller))) };
}

/** A review comment by id (also what its reactions hang on). */
export function reviewCommentOf(ctx: RestContext, level: "read" | "write") {
  const repo = repoOf(ctx, { permission: "pull_requests", level, role: "read" });
  const comment = ctx.state.reviewComments.get(numberParam(ctx, "comment_id"));
  if (!comment || comment.repoId !== repo.id) throw notFound();
  return { repo, comment };
}

function getReviewComment(ctx: RestContext) {
  const { repo, comment } = reviewCommentOf(ctx, "read");
  return { body: renderReviewComment(ctx.render, repo, comment) };
}

export const reviewRoutes: RouteTable = [
  ["GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}", { handler: getReviewComment }],
  ["GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", { handler: listReviews }],
  ["POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", { handler: postReview }],
  ["GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}", { handler: getReview }],
  ["GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", { handler: listReviewComments }],
  ["POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", { handler: postReviewComment }],
];
