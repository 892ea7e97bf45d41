import type { components } from "@octokit/openapi-types";
import { isoOrNull, isoSeconds } from "../sim-clock";
import type { SimComment, SimIssue, SimIssueEvent, SimRepo } from "../model";
import { labelsOf } from "../state/labels";
import type { RenderContext } from "./context";
import { renderLabel } from "./label";
import { renderSimpleUser } from "./user";

type Schemas = components["schemas"];

export function authorAssociation(ctx: RenderContext, repo: SimRepo, userId: number): Schemas["author-association"] {
  if (repo.ownerId === userId) return "OWNER";
  // an invited collaborator (of any role); anyone else — a stranger reading a public repository — is NONE
  if (repo.collaborators.has(userId)) return "COLLABORATOR";
  return "NONE";
}

export function renderIssue(ctx: RenderContext, repo: SimRepo, item: SimIssue): Schemas["issue"] {
  const full = ctx.state.fullName(repo);
  const api = `${ctx.baseUrl}/repos/${full}`;
  const url = `${api}/issues/${item.number}`;
  const html = `${ctx.baseUrl}/${full}/${item.pull ? "pull" : "issues"}/${item.number}`;
  const comments = ctx.state.commentsOf(repo, item.number).length;
  return {
    id: item.id,
    node_id: item.nodeId,
    url,
    repository_url: api,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: html,
    number: item.number,
    state: item.state,
    state_reason: item.stateReason,
    title: item.title,
    body: item.body,
    user: renderSimpleUser(ctx, ctx.state.account(item.authorId)),
    labels: labelsOf(repo, item).map((l) => renderLabel(ctx, repo, l)),
    assignee: null,
    assignees: [],
    milestone: null,
    locked: item.locked,
    active_lock_reason: null,
    comments,
    ...(item.pull
      ? {
          pull_request: {
            url: `${api}/pulls/${item.number}`,
            html_url: html,
            diff_url: `${html}.diff`,
            patch_url: `${html}.patch`,
            merged_at: isoOrNull(item.pull.mergedAt),
          },
          draft: item.pull.draft,
        }
      : {}),
    closed_at: isoOrNull(item.closedAt),
    created_at: isoSeconds(item.createdAt),
    updated_at: isoSeconds(item.updatedAt),
    closed_by: item.closedById === null ? null : renderSimpleUser(ctx, ctx.state.account(item.closedById)),
    author_association: authorAssociation(ctx, repo, item.authorId),
    timeline_url: `${url}/timeline`,
  } satisfies Schemas["issue"];
}

export function renderComment(ctx: RenderContext, repo: SimRepo, comment: SimComment): Schemas["issue-comment"] {
  const full = ctx.state.fullName(repo);
  const item = ctx.state.item(repo, comment.issueNumber);
  return {
    id: comment.id,
    node_id: comment.nodeId,
    url: `${ctx.baseUrl}/repos/${full}/issues/comments/${comment.id}`,
    html_url: `${ctx.baseUrl}/${full}/${item.pull ? "pull" : "issues"}/${comment.issueNumber}#issuecomment-${comment.id}`,
    body: comment.body,
    user: renderSimpleUser(ctx, ctx.state.account(comment.authorId)),
    created_at: isoSeconds(comment.createdAt),
    updated_at: isoSeconds(comment.updatedAt),
    issue_url: `${ctx.baseUrl}/repos/${full}/issues/${comment.issueNumber}`,
    author_association: authorAssociation(ctx, repo, comment.authorId),
  } satisfies Schemas["issue-comment"];
}

/** One entry of an Item's events timeline, in the shape GET /repos/{o}/{r}/issues/{n}/events answers. */
export function renderIssueEvent(ctx: RenderContext, repo: SimRepo, event: SimIssueEvent): Schemas["issue-event"] {
  return {
    id: event.id,
    node_id: event.nodeId,
    url: `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}/issues/events/${event.id}`,
    actor: renderSimpleUser(ctx, ctx.state.account(event.actorId)),
    event: event.event,
    commit_id: null,
    commit_url: null,
    created_at: isoSeconds(event.createdAt),
    performed_via_github_app: null,
    ...(event.label ? { label: event.label } : {}),
    ...(event.rename ? { rename: event.rename } : {}),
  } satisfies Schemas["issue-event"];
}
