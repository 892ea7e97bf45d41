import { GitHubApiError, validationFailed } from "../api-error";
import type { SimComment, SimIssue, SimRepo } from "../model";
import type { IssueChanges } from "./events";
import { announceLabels, attachLabels, validateLabel } from "./labels";
import type { SimState } from "./sim-state";

export interface IssueInput {
  title: string;
  body?: string | null;
  labels?: string[];
}

export interface IssueEdit {
  title?: string;
  body?: string | null;
  state?: "open" | "closed";
  stateReason?: "completed" | "not_planned" | "reopened" | null;
}

export function requireTitle(title: unknown): string {
  if (typeof title !== "string" || !title.trim()) {
    throw validationFailed([{ resource: "Issue", field: "title", code: "missing_field" }]);
  }
  if (title.length > 256) throw validationFailed([{ resource: "Issue", field: "title", code: "invalid", message: "title is too long (maximum is 256 characters)" }]);
  return title;
}

/** GitHub's longest body of an issue, a pull request or a comment, in characters. */
export const BODY_MAX = 65_536;

/** A body GitHub accepts (null: none), else its 422. */
export function requireBodyWithin(resource: "Issue" | "PullRequest" | "IssueComment", body: string | null | undefined): string | null {
  if (typeof body === "string" && body.length > BODY_MAX) {
    throw validationFailed([{ resource, field: "body", code: "custom", message: `body is too long (maximum is ${BODY_MAX} characters)` }]);
  }
  return body ?? null;
}

/** Allocates the next number of the repository's shared issue/pull request sequence. */
export function newItem(state: SimState, repo: SimRepo, title: string, body: string | null, authorId: number): SimIssue {
  const now = state.clock.now();
  const item: SimIssue = {
    ...state.newNode("Issue"),
    repoId: repo.id,
    number: repo.nextNumber++,
    title,
    body,
    state: "open",
    stateReason: null,
    authorId,
    labels: [],
    locked: false,
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    closedById: null,
    pull: null,
  };
  state.items.set(`${repo.id}#${item.number}`, item);
  return item;
}

export function createIssue(state: SimState, repo: SimRepo, input: IssueInput, authorId: number): SimIssue {
  for (const name of input.labels ?? []) validateLabel({ name });
  const item = newItem(state, repo, requireTitle(input.title), requireBodyWithin("Issue", input.body), authorId);
  const labels = attachLabels(state, repo, item, input.labels ?? [], authorId);
  state.emit({ event: "issues", action: "opened", repoId: repo.id, number: item.number, senderId: authorId });
  announceLabels(state, repo, item, labels, authorId);
  return item;
}

function emitItem(state: SimState, repo: SimRepo, item: SimIssue, action: "edited" | "closed" | "reopened", senderId: number, changes?: IssueChanges): void {
  const base = { repoId: repo.id, number: item.number, senderId, ...(changes ? { changes } : {}) };
  if (item.pull) state.emit({ event: "pull_request", action, ...base });
  else state.emit({ event: "issues", action, ...base });
}

/** PATCH an issue (or a pull request through the issues API): title, body, state. */
export function editIssue(state: SimState, repo: SimRepo, item: SimIssue, edit: IssueEdit, senderId: number): SimIssue {
  requireBodyWithin(item.pull ? "PullRequest" : "Issue", edit.body);
  const changes: IssueChanges = {};
  if (edit.title !== undefined && edit.title !== item.title) {
    changes.title = { from: item.title };
    item.title = requireTitle(edit.title);
  }
  if (edit.body !== undefined && edit.body !== item.body) {
    changes.body = { from: item.body };
    item.body = edit.body;
    item.bodyEdit = { editorId: senderId, at: state.clock.now() };
  }
  const now = state.clock.now();
  const edited = Object.keys(changes).length > 0;
  if (edited) {
    item.updatedAt = now;
    emitItem(state, repo, item, "edited", senderId, changes);
  }
  if (edit.state !== undefined && edit.state !== "open" && edit.state !== "closed") {
    throw validationFailed([{ resource: "Issue", field: "state", code: "invalid", value: edit.state }]);
  }
  if (edit.state && edit.state !== item.state) {
    if (item.pull?.merged) throw validationFailed([{ resource: "PullRequest", field: "state", code: "invalid", message: "Cannot reopen a merged pull request" }]);
    item.state = edit.state;
    item.updatedAt = now;
    if (edit.state === "closed") {
      item.closedAt = now;
      item.closedById = senderId;
      item.stateReason = edit.stateReason ?? "completed";
      emitItem(state, repo, item, "closed", senderId);
    } else {
      item.closedAt = null;
      item.closedById = null;
      item.stateReason = "reopened";
      emitItem(state, repo, item, "reopened", senderId);
    }
  }
  return item;
}

export function createComment(state: SimState, repo: SimRepo, item: SimIssue, body: unknown, authorId: number): SimComment {
  if (typeof body !== "string" || !body) throw validationFailed([{ resource: "IssueComment", field: "body", code: "missing_field" }]);
  requireBodyWithin("IssueComment", body);
  if (item.locked) throw new GitHubApiError(403, "Unable to create comment because issue is locked.");
  const now = state.clock.now();
  const comment: SimComment = { ...state.newNode("IssueComment"), repoId: repo.id, issueNumber: item.number, body, authorId, createdAt: now, updatedAt: now };
  state.comments.set(comment.id, comment);
  item.updatedAt = now;
  state.emit({ event: "issue_comment", action: "created", repoId: repo.id, number: item.number, commentId: comment.id, senderId: authorId });
  return comment;
}

export function editComment(state: SimState, repo: SimRepo, comment: SimComment, body: unknown, senderId: number): SimComment {
  if (typeof body !== "string" || !body) throw validationFailed([{ resource: "IssueComment", field: "body", code: "missing_field" }]);
  const from = comment.body;
  comment.body = requireBodyWithin("IssueComment", body)!;
  comment.updatedAt = state.clock.now();
  // GitHub touches the Item for an edited comment as for a new one
  const item = state.findItem(repo, comment.issueNumber);
  if (item) item.updatedAt = comment.updatedAt;
  state.emit({ event: "issue_comment", action: "edited", repoId: repo.id, number: comment.issueNumber, commentId: comment.id, senderId, changes: { body: { from } } });
  return comment;
}
