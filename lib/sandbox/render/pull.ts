import type { components } from "@octokit/openapi-types";
import { isoOrNull, isoSeconds } from "../sim-clock";
import type { SimIssue, SimRepo } from "../model";
import { labelsOf } from "../state/labels";
import { requirePull } from "../state/pulls";
import type { RenderContext } from "./context";
import { authorAssociation } from "./issue";
import { renderLabel } from "./label";
import { renderRepository } from "./repository";
import { renderSimpleUser } from "./user";

type Schemas = components["schemas"];

function mergeableState(item: SimIssue): string {
  const pull = requirePull(item);
  if (pull.merged || item.state === "closed") return "unknown";
  if (pull.mergeable === null) return "unknown";
  if (!pull.mergeable) return "dirty";
  return pull.draft ? "draft" : "clean";
}

export function renderPullSimple(ctx: RenderContext, repo: SimRepo, item: SimIssue) {
  const pull = requirePull(item);
  const owner = ctx.state.account(repo.ownerId);
  const full = ctx.state.fullName(repo);
  const api = `${ctx.baseUrl}/repos/${full}`;
  const url = `${api}/pulls/${item.number}`;
  const html = `${ctx.baseUrl}/${full}/pull/${item.number}`;
  const issueUrl = `${api}/issues/${item.number}`;
  const repository = renderRepository(ctx, repo);
  const ownerUser = renderSimpleUser(ctx, owner);
  const link = (href: string): Schemas["link"] => ({ href });
  return {
    url,
    id: pull.id,
    node_id: pull.nodeId,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issueUrl,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${api}/pulls/comments{/number}`,
    comments_url: `${issueUrl}/comments`,
    statuses_url: `${api}/statuses/${pull.headSha}`,
    number: item.number,
    state: item.state,
    locked: item.locked,
    title: item.title,
    user: renderSimpleUser(ctx, ctx.state.account(item.authorId)),
    body: item.body,
    labels: labelsOf(repo, item).map((l) => ({ ...renderLabel(ctx, repo, l), description: l.description ?? "" })),
    milestone: null,
    active_lock_reason: null,
    created_at: isoSeconds(item.createdAt),
    updated_at: isoSeconds(item.updatedAt),
    closed_at: isoOrNull(item.closedAt),
    merged_at: isoOrNull(pull.mergedAt),
    merge_commit_sha: pull.mergeCommitSha,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: { label: `${owner.login}:${pull.headRef}`, ref: pull.headRef, sha: pull.headSha, user: ownerUser, repo: repository },
    base: { label: `${owner.login}:${pull.baseRef}`, ref: pull.baseRef, sha: pull.baseSha, user: ownerUser, repo: repository },
    _links: {
      self: link(url),
      html: link(html),
      issue: link(issueUrl),
      comments: link(`${issueUrl}/comments`),
      review_comments: link(`${url}/comments`),
      review_comment: link(`${api}/pulls/comments{/number}`),
      commits: link(`${url}/commits`),
      statuses: link(`${api}/statuses/${pull.headSha}`),
    },
    author_association: authorAssociation(ctx, repo, item.authorId),
    auto_merge: null,
    draft: pull.draft,
  } satisfies Schemas["pull-request-simple"];
}

export function renderPull(ctx: RenderContext, repo: SimRepo, item: SimIssue): Schemas["pull-request"] {
  const pull = requirePull(item);
  const simple = renderPullSimple(ctx, repo, item);
  return {
    ...simple,
    labels: labelsOf(repo, item).map((l) => renderLabel(ctx, repo, l)),
    merged: pull.merged,
    mergeable: pull.mergeable,
    rebaseable: pull.mergeable,
    mergeable_state: mergeableState(item),
    merged_by: pull.mergedById === null ? null : renderSimpleUser(ctx, ctx.state.account(pull.mergedById)),
    comments: ctx.state.commentsOf(repo, item.number).length,
    review_comments: 0,
    maintainer_can_modify: pull.maintainerCanModify,
    commits: 1,
    additions: 0,
    deletions: 0,
    changed_files: 0,
  } satisfies Schemas["pull-request"];
}
