import type { components } from "@octokit/openapi-types";
import { isoSeconds } from "../sim-clock";
import type { SimRepo } from "../model";
import type { SimReview, SimReviewComment } from "../model";
import type { RenderContext } from "./context";
import { authorAssociation } from "./issue";
import { renderSimpleUser } from "./user";

type Schemas = components["schemas"];

export function renderReview(ctx: RenderContext, repo: SimRepo, review: SimReview): Schemas["pull-request-review"] {
  const full = ctx.state.fullName(repo);
  const html = `${ctx.baseUrl}/${full}/pull/${review.pullNumber}#pullrequestreview-${review.id}`;
  const pull = `${ctx.baseUrl}/repos/${full}/pulls/${review.pullNumber}`;
  return {
    id: review.id,
    node_id: review.nodeId,
    user: renderSimpleUser(ctx, ctx.state.account(review.authorId)),
    body: review.body,
    state: review.state,
    html_url: html,
    pull_request_url: pull,
    _links: { html: { href: html }, pull_request: { href: pull } },
    submitted_at: isoSeconds(review.submittedAt),
    commit_id: review.commitId,
    author_association: authorAssociation(ctx, repo, review.authorId),
  };
}

export function renderReviewComment(ctx: RenderContext, repo: SimRepo, c: SimReviewComment): Schemas["pull-request-review-comment"] {
  const full = ctx.state.fullName(repo);
  const url = `${ctx.baseUrl}/repos/${full}/pulls/comments/${c.id}`;
  const html = `${ctx.baseUrl}/${full}/pull/${c.pullNumber}#discussion_r${c.id}`;
  const pull = `${ctx.baseUrl}/repos/${full}/pulls/${c.pullNumber}`;
  return {
    url,
    id: c.id,
    node_id: c.nodeId,
    pull_request_review_id: c.reviewId,
    ...(c.inReplyTo !== null ? { in_reply_to_id: c.inReplyTo } : {}),
    diff_hunk: `@@ -${c.line},1 +${c.line},1 @@`,
    path: c.path,
    position: c.line,
    original_position: c.line,
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    user: renderSimpleUser(ctx, ctx.state.account(c.authorId)),
    body: c.body,
    created_at: isoSeconds(c.createdAt),
    updated_at: isoSeconds(c.updatedAt),
    html_url: html,
    pull_request_url: pull,
    author_association: authorAssociation(ctx, repo, c.authorId),
    _links: { self: { href: url }, html: { href: html }, pull_request: { href: pull } },
    line: c.line,
    original_line: c.line,
    side: "RIGHT",
  };
}
