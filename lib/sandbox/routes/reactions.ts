import type { components } from "@octokit/openapi-types";
import { actorId } from "../access";
import { isoSeconds } from "../sim-clock";
import { asObject } from "../http-util";
import type { RenderContext } from "../render/context";
import { renderSimpleUser } from "../render/user";
import { paginate, repoScoped, type RestContext } from "../rest";
import type { SimReaction } from "../model";
import { react, reactionsOf } from "../state/reactions";
import { commentOf } from "./issues";
import { reviewCommentOf } from "./reviews";

type Schemas = components["schemas"];

function renderReaction(ctx: RenderContext, reaction: SimReaction): Schemas["reaction"] {
  return {
    id: reaction.id,
    node_id: reaction.nodeId,
    user: renderSimpleUser(ctx, ctx.state.account(reaction.userId)),
    content: reaction.content,
    created_at: isoSeconds(reaction.createdAt),
  };
}

/** GET /repos/{o}/{r}/issues/comments/{id}/reactions, oldest first. */
function listReactions(ctx: RestContext) {
  const { comment } = commentOf(ctx, "read");
  const { page, headers } = paginate(ctx, reactionsOf(ctx.state, comment));
  return { body: page.map((r) => renderReaction(ctx.render, r)), headers };
}

/** POST …/reactions: 201 for a new reaction, 200 for one the caller already left. */
function reactTo(ctx: RestContext, comment: { id: number }) {
  const { reaction, created } = react(ctx.state, comment, asObject(ctx.body).content, actorId(ctx.state, ctx.caller));
  return { status: created ? 201 : 200, body: renderReaction(ctx.render, reaction) };
}

const postReaction = (ctx: RestContext) => reactTo(ctx, commentOf(ctx, "write").comment);
const postReviewCommentReaction = (ctx: RestContext) => reactTo(ctx, reviewCommentOf(ctx, "write").comment);
const listReviewCommentReactions = (ctx: RestContext) => {
  const { page, headers } = paginate(ctx, reactionsOf(ctx.state, reviewCommentOf(ctx, "read").comment));
  return { body: page.map((r) => renderReaction(ctx.render, r)), headers };
};

export const reactionRoutes = repoScoped({
  "/issues/comments/{comment_id}/reactions": { GET: listReactions, POST: postReaction },
  "/pulls/comments/{comment_id}/reactions": { GET: listReviewCommentReactions, POST: postReviewCommentReaction },
});
