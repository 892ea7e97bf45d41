import type { components } from "@octokit/openapi-types";
import { actorId } from "../access";
import { notFound, validationFailed } from "../api-error";
import { asObject } from "../http-util";
import type { SimRepo, SimReviewComment } from "../model";
import { renderReview, renderReviewComment } from "../render/review";
import { numberParam, paginate, repoOf, repoScoped, timeQuery, type RestContext } from "../rest";
import { createReviewComment, submitReview } from "../state/reviews";
import { pullOf } from "./items";

type Schemas = components["schemas"];

/** A page of a pull request's reviews or line comments (`records`), each as `render` gives it. */
function listOnPull<T extends { repoId: number; pullNumber: number }>(ctx: RestContext, records: ReadonlyMap<number, T>, render: (repo: SimRepo, record: T) => unknown) {
  const { repo, item } = pullOf(ctx, "read");
  const { page, headers } = paginate(ctx, [...records.values()].filter((r) => r.repoId === repo.id && r.pullNumber === item.number));
  return { body: page.map((r) => render(repo, r)), headers };
}

function listReviews(ctx: RestContext) {
  return listOnPull(ctx, ctx.state.reviews, (repo, r) => renderReview(ctx.render, repo, r) satisfies Schemas["pull-request-review"]);
}

function getReview(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "read");
  const review = ctx.state.reviews.get(numberParam(ctx, "review_id"));
  if (!review || review.repoId !== repo.id || review.pullNumber !== item.number) throw notFound();
  return { body: renderReview(ctx.render, repo, review) };
}

function postReview(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "write", "read");
  const body = asObject(ctx.body);
  const { review } = submitReview(ctx.state, repo, item, { event: body.event, body: body.body, comments: body.comments }, actorId(ctx.state, ctx.caller));
  return { body: renderReview(ctx.render, repo, review) };
}

function listReviewComments(ctx: RestContext) {
  return listOnPull(ctx, ctx.state.reviewComments, (repo, c) => renderReviewComment(ctx.render, repo, c) satisfies Schemas["pull-request-review-comment"]);
}

/**
 * GET /repos/{o}/{r}/pulls/comments: the review comments of every pull request, by `sort`
 * (created, updated) and `direction` (asc, desc; ignored without `sort`), `since` on updated_at.
 */
function listRepositoryReviewComments(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "pull_requests", level: "read" });
  const sort = ctx.query.get("sort") ?? "created";
  if (!["created", "updated"].includes(sort)) throw validationFailed([{ resource: "PullRequestReviewComment", field: "sort", code: "invalid", value: sort }]);
  const direction = ctx.query.has("sort") ? (ctx.query.get("direction") ?? "desc") : "asc";
  if (!["asc", "desc"].includes(direction)) throw validationFailed([{ resource: "PullRequestReviewComment", field: "direction", code: "invalid", value: direction }]);
  const since = timeQuery(ctx, "since");
  const key = (c: SimReviewComment) => seconds(sort === "updated" ? c.updatedAt : c.createdAt);
  const comments = [...ctx.state.reviewComments.values()]
    .filter((c) => c.repoId === repo.id && (since === null || seconds(c.updatedAt) >= seconds(since)))
    .sort((a, b) => (direction === "asc" ? 1 : -1) * (key(a) - key(b) || a.id - b.id));
  const { page, headers } = paginate(ctx, comments);
  return { body: page.map((c) => renderReviewComment(ctx.render, repo, c) satisfies Schemas["pull-request-review-comment"]), headers };
}

const seconds = (ms: number): number => Math.floor(ms / 1000) * 1000;

function postReviewComment(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "write", "read");
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

export const reviewRoutes = repoScoped({
  "/pulls/comments": { GET: listRepositoryReviewComments },
  "/pulls/comments/{comment_id}": { GET: getReviewComment },
  "/pulls/{pull_number}/reviews": { GET: listReviews, POST: postReview },
  "/pulls/{pull_number}/reviews/{review_id}": { GET: getReview },
  "/pulls/{pull_number}/comments": { GET: listReviewComments, POST: postReviewComment },
});
