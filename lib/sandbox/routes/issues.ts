import type { components } from "@octokit/openapi-types";
import { actorId } from "../access";
import { GitHubApiError, validationFailed } from "../api-error";
import { asObject } from "../http-util";
import type { SimIssue } from "../model";
import { renderComment, renderIssue, renderIssueEvent } from "../render/issue";
import { numberParam, paginate, repoOf, stringField, stringList, timeQuery, repoScoped, type RestContext } from "../rest";
import { createComment, createIssue, editComment, editIssue, type IssueEdit } from "../state/issues";
import { setLabels } from "../state/labels";
import { itemOf, visibleKinds } from "./items";

type Schemas = components["schemas"];

const seconds = (ms: number): number => Math.floor(ms / 1000) * 1000;

function sortItems(items: SimIssue[], sort: string, direction: string, comments: (i: SimIssue) => number): SimIssue[] {
  const key = (item: SimIssue): number =>
    sort === "updated" ? seconds(item.updatedAt) : sort === "comments" ? comments(item) : seconds(item.createdAt);
  const sign = direction === "asc" ? 1 : -1;
  return [...items].sort((a, b) => sign * (key(a) - key(b) || a.number - b.number));
}

/** GET /repos/{o}/{r}/issues — pull requests included, with their `pull_request` key. */
function listIssues(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level: "read" });
  const state = ctx.query.get("state") ?? "open";
  if (!["open", "closed", "all"].includes(state)) throw validationFailed([{ resource: "Issue", field: "state", code: "invalid", value: state }]);
  const sort = ctx.query.get("sort") ?? "created";
  if (!["created", "updated", "comments"].includes(sort)) throw validationFailed([{ resource: "Issue", field: "sort", code: "invalid", value: sort }]);
  const direction = ctx.query.get("direction") ?? "desc";
  if (!["asc", "desc"].includes(direction)) throw validationFailed([{ resource: "Issue", field: "direction", code: "invalid", value: direction }]);
  const since = timeQuery(ctx, "since");
  const labels = (ctx.query.get("labels") ?? "").split(",").map((l) => l.trim().toLowerCase()).filter(Boolean);
  const creator = ctx.query.get("creator")?.toLowerCase();
  const kinds = visibleKinds(ctx);
  const items = ctx.state.itemsOf(repo).filter(
    (item) =>
      (item.pull ? kinds.pulls : kinds.issues) &&
      (state === "all" || item.state === state) &&
      (since === null || seconds(item.updatedAt) >= seconds(since)) &&
      labels.every((l) => item.labels.includes(l)) &&
      (!creator || ctx.state.account(item.authorId).login.toLowerCase() === creator),
  );
  const sorted = sortItems(items, sort, direction, (i) => ctx.state.commentsOf(repo, i.number).length);
  const { page, headers } = paginate(ctx, sorted);
  return { body: page.map((item) => renderIssue(ctx.render, repo, item) satisfies Schemas["issue"]), headers };
}

function getIssue(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "read");
  return { body: renderIssue(ctx.render, repo, item) satisfies Schemas["issue"] };
}

function postIssue(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "issues", level: "write", role: "read" });
  const body = asObject(ctx.body);
  const labels = body.labels === undefined ? [] : stringList(body.labels, "Issue", "labels");
  const item = createIssue(
    ctx.state,
    repo,
    { title: stringField(body, "title", "Issue", true) ?? "", body: stringField(body, "body", "Issue") ?? null, labels },
    actorId(ctx.state, ctx.caller),
  );
  return { status: 201, body: renderIssue(ctx.render, repo, item) satisfies Schemas["issue"] };
}

/** The title, body and state of a PATCH of an issue or a pull request (`resource`: which, in a validation error). */
export function issueEditOf(body: Record<string, unknown>, resource: "Issue" | "PullRequest"): IssueEdit {
  const edit: IssueEdit = {};
  const title = stringField(body, "title", resource);
  if (title !== undefined) edit.title = title;
  if ("body" in body) edit.body = stringField(body, "body", resource) ?? null;
  const state = stringField(body, "state", resource);
  if (state !== undefined) {
    if (state !== "open" && state !== "closed") throw validationFailed([{ resource, field: "state", code: "invalid", value: state }]);
    edit.state = state;
  }
  return edit;
}

function patchIssue(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "write");
  const body = asObject(ctx.body);
  const edit = issueEditOf(body, "Issue");
  const reason = stringField(body, "state_reason", "Issue");
  if (reason === "completed" || reason === "not_planned" || reason === "reopened") edit.stateReason = reason;
  const sender = actorId(ctx.state, ctx.caller);
  editIssue(ctx.state, repo, item, edit, sender);
  if (body.labels !== undefined) {
    const names = (body.labels as unknown[]).map((l) => (typeof l === "object" && l && "name" in l ? String((l as { name: unknown }).name) : String(l)));
    setLabels(ctx.state, repo, item, names, sender);
  }
  return { body: renderIssue(ctx.render, repo, item) satisfies Schemas["issue"] };
}

/** GET /repos/{o}/{r}/issues/{n}/events: the Item's timeline, oldest first, with each change's actor. */
function listEvents(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "read");
  const { page, headers } = paginate(ctx, ctx.state.issueEventsOf(repo, item.number));
  return { body: page.map((e) => renderIssueEvent(ctx.render, repo, e)), headers };
}

function listComments(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "read");
  const since = timeQuery(ctx, "since");
  const comments = ctx.state
    .commentsOf(repo, item.number)
    .filter((c) => since === null || seconds(c.updatedAt) >= seconds(since))
    .sort((a, b) => a.id - b.id);
  const { page, headers } = paginate(ctx, comments);
  return { body: page.map((c) => renderComment(ctx.render, repo, c) satisfies Schemas["issue-comment"]), headers };
}

/**
 * GET /repos/{o}/{r}/issues/comments: the comments of every issue and pull request, by `sort`
 * (created, updated) and `direction` (asc, desc; ignored without `sort`), `since` on updated_at.
 */
function listRepositoryComments(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level: "read" });
  const sort = ctx.query.get("sort") ?? "created";
  if (!["created", "updated"].includes(sort)) throw validationFailed([{ resource: "IssueComment", field: "sort", code: "invalid", value: sort }]);
  const direction = ctx.query.has("sort") ? (ctx.query.get("direction") ?? "desc") : "asc";
  if (!["asc", "desc"].includes(direction)) throw validationFailed([{ resource: "IssueComment", field: "direction", code: "invalid", value: direction }]);
  const since = timeQuery(ctx, "since");
  const kinds = visibleKinds(ctx);
  const key = (c: { createdAt: number; updatedAt: number }) => seconds(sort === "updated" ? c.updatedAt : c.createdAt);
  const comments = [...ctx.state.comments.values()]
    .filter((c) => c.repoId === repo.id && (since === null || seconds(c.updatedAt) >= seconds(since)))
    .filter((c) => (ctx.state.findItem(repo, c.issueNumber)?.pull ? kinds.pulls : kinds.issues))
    .sort((a, b) => (direction === "asc" ? 1 : -1) * (key(a) - key(b) || a.id - b.id));
  const { page, headers } = paginate(ctx, comments);
  return { body: page.map((c) => renderComment(ctx.render, repo, c) satisfies Schemas["issue-comment"]), headers };
}

function postComment(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "write", "read");
  const comment = createComment(ctx.state, repo, item, asObject(ctx.body).body, actorId(ctx.state, ctx.caller));
  return { status: 201, body: renderComment(ctx.render, repo, comment) satisfies Schemas["issue-comment"] };
}

export function commentOf(ctx: RestContext, level: "read" | "write") {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level, role: "read" });
  const comment = ctx.state.comments.get(numberParam(ctx, "comment_id"));
  if (!comment || comment.repoId !== repo.id) throw new GitHubApiError(404, "Not Found");
  return { repo, comment };
}

function getComment(ctx: RestContext) {
  const { repo, comment } = commentOf(ctx, "read");
  return { body: renderComment(ctx.render, repo, comment) satisfies Schemas["issue-comment"] };
}

function patchComment(ctx: RestContext) {
  const { repo, comment } = commentOf(ctx, "write");
  const sender = actorId(ctx.state, ctx.caller);
  if (ctx.caller.kind === "user" && comment.authorId !== sender && ctx.state.permissionOf(repo, sender) === "read") {
    throw new GitHubApiError(403, "Must have push access to repository");
  }
  editComment(ctx.state, repo, comment, asObject(ctx.body).body, sender);
  return { body: renderComment(ctx.render, repo, comment) satisfies Schemas["issue-comment"] };
}

export const issueRoutes = repoScoped({
  "/issues": { GET: listIssues, POST: postIssue },
  "/issues/comments": { GET: listRepositoryComments },
  "/issues/comments/{comment_id}": { GET: getComment, PATCH: patchComment },
  "/issues/{issue_number}": { GET: getIssue, PATCH: patchIssue },
  "/issues/{issue_number}/comments": { GET: listComments, POST: postComment },
  "/issues/{issue_number}/events": { GET: listEvents },
});
