import { validationFailed } from "../api-error";
import type { SimIssue, SimRepo } from "../model";
import { announceLabels, attachLabels, validateLabel } from "./labels";
import { newItem, requireBodyWithin, requireTitle } from "./issues";
import type { SimState } from "./sim-state";

export interface PullInput {
  title: string;
  body?: string | null;
  head: string;
  headSha: string;
  base: string;
  baseSha: string;
  draft?: boolean;
  labels?: string[];
}

export function openPulls(state: SimState, repo: SimRepo): SimIssue[] {
  return state.itemsOf(repo).filter((item) => item.pull && item.state === "open");
}

export function createPull(state: SimState, repo: SimRepo, input: PullInput, authorId: number): SimIssue {
  const title = requireTitle(input.title);
  for (const name of input.labels ?? []) validateLabel({ name });
  const duplicate = openPulls(state, repo).find((p) => p.pull?.headRef === input.head && p.pull.baseRef === input.base);
  if (duplicate) {
    throw validationFailed([
      { resource: "PullRequest", code: "custom", message: `A pull request already exists for ${state.account(repo.ownerId).login}:${input.head}.` },
    ]);
  }
  const item = newItem(state, repo, title, requireBodyWithin("PullRequest", input.body), authorId);
  item.pull = {
    ...state.newNode("PullRequest"),
    headRef: input.head,
    headSha: input.headSha,
    baseRef: input.base,
    baseSha: input.baseSha,
    draft: input.draft ?? false,
    merged: false,
    mergedAt: null,
    mergedById: null,
    mergeCommitSha: null,
    mergeable: null,
    mergeableOverride: null,
    maintainerCanModify: false,
  };
  const labels = attachLabels(state, repo, item, input.labels ?? [], authorId);
  state.emit({ event: "pull_request", action: "opened", repoId: repo.id, number: item.number, senderId: authorId });
  announceLabels(state, repo, item, labels, authorId);
  return item;
}

export function requirePull(item: SimIssue): NonNullable<SimIssue["pull"]> {
  if (!item.pull) throw new Error(`#${item.number} is an issue, not a pull request`);
  return item.pull;
}

/** PATCH /pulls/{n} base change: the pull request now targets another branch. */
export function changeBase(state: SimState, repo: SimRepo, item: SimIssue, base: string, baseSha: string, senderId: number): void {
  const pull = requirePull(item);
  if (pull.baseRef === base) return;
  const changes = { base: { ref: { from: pull.baseRef }, sha: { from: pull.baseSha } } };
  pull.baseRef = base;
  pull.baseSha = baseSha;
  pull.mergeable = null;
  item.updatedAt = state.clock.now();
  state.emit({ event: "pull_request", action: "edited", repoId: repo.id, number: item.number, senderId, changes });
}

export function setDraft(state: SimState, repo: SimRepo, item: SimIssue, draft: boolean, senderId: number): void {
  const pull = requirePull(item);
  if (pull.draft === draft) return;
  pull.draft = draft;
  item.updatedAt = state.clock.now();
  state.emit({
    event: "pull_request",
    action: draft ? "converted_to_draft" : "ready_for_review",
    repoId: repo.id,
    number: item.number,
    senderId,
  });
}

/**
 * A branch moved (a push over git, or the control API's pushCommit): open pull requests with
 * that head get the new sha and a `synchronize`; every pull request touching the branch has
 * its mergeability recomputed (without its updated_at changing when only the base moved).
 */
export function branchMoved(state: SimState, repo: SimRepo, branch: string, before: string, after: string, senderId: number): void {
  const now = state.clock.now();
  repo.pushedAt = now;
  for (const item of openPulls(state, repo)) {
    const pull = requirePull(item);
    if (pull.headRef === branch && pull.headSha !== after) {
      pull.headSha = after;
      pull.mergeable = null;
      item.updatedAt = now;
      state.emit({ event: "pull_request", action: "synchronize", repoId: repo.id, number: item.number, senderId, before, after });
    } else if (pull.baseRef === branch) {
      pull.baseSha = after;
      pull.mergeable = null;
    }
  }
}

export function markMerged(state: SimState, repo: SimRepo, item: SimIssue, mergeCommitSha: string, senderId: number): void {
  const pull = requirePull(item);
  const now = state.clock.now();
  pull.merged = true;
  pull.mergedAt = now;
  pull.mergedById = senderId;
  pull.mergeCommitSha = mergeCommitSha;
  pull.mergeable = null;
  item.state = "closed";
  item.closedAt = now;
  item.closedById = senderId;
  item.updatedAt = now;
  state.emit({ event: "pull_request", action: "closed", repoId: repo.id, number: item.number, senderId });
}

/** Control API: the value of `mergeable`. Changes no updated_at, emits nothing, like GitHub. */
export function forceMergeable(item: SimIssue, value: boolean | null): void {
  const pull = requirePull(item);
  pull.mergeableOverride = value;
  pull.mergeable = value;
}
