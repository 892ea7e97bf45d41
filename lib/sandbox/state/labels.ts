import { GitHubApiError, validationFailed } from "../api-error";
import type { SimIssue, SimLabel, SimRepo } from "../model";
import type { SimEvent } from "./events";
import type { SimState } from "./sim-state";

export interface LabelInput {
  name: string;
  color?: string;
  description?: string | null;
}

const COLOR = /^[0-9a-fA-F]{6}$/;

export function validateLabel(input: LabelInput): void {
  const name = typeof input.name === "string" ? input.name.trim() : "";
  if (!name) throw validationFailed([{ resource: "Label", field: "name", code: "missing_field" }]);
  if (name.length > 50) {
    throw validationFailed([{ resource: "Label", field: "name", code: "invalid", message: "name is too long (maximum is 50 characters)" }]);
  }
  if (input.color !== undefined && !COLOR.test(input.color)) {
    throw validationFailed([{ resource: "Label", field: "color", code: "invalid", value: input.color }]);
  }
  if (input.description && input.description.length > 100) {
    throw validationFailed([{ resource: "Label", field: "description", code: "invalid", message: "description is too long (maximum is 100 characters)" }]);
  }
}

/** POST /repos/{o}/{r}/labels: 422 already_exists on a case-insensitive duplicate. */
export function createLabel(state: SimState, repo: SimRepo, input: LabelInput, senderId: number): SimLabel {
  validateLabel(input);
  const name = input.name.trim();
  if (repo.labels.has(name.toLowerCase())) {
    throw validationFailed([{ resource: "Label", code: "already_exists", field: "name" }]);
  }
  const label: SimLabel = {
    ...state.newNode("Label"),
    name,
    color: (input.color ?? "ededed").toLowerCase(),
    description: input.description ?? null,
    default: false,
  };
  repo.labels.set(name.toLowerCase(), label);
  state.emit({ event: "label", action: "created", repoId: repo.id, label, senderId });
  return label;
}

function findOrCreate(state: SimState, repo: SimRepo, name: string, senderId: number): SimLabel {
  return repo.labels.get(name.trim().toLowerCase()) ?? createLabel(state, repo, { name }, senderId);
}

export function labelsOf(repo: SimRepo, item: SimIssue): SimLabel[] {
  return item.labels.map((key) => repo.labels.get(key)).filter((l): l is SimLabel => l !== undefined);
}

function emitLabelEvent(state: SimState, repo: SimRepo, item: SimIssue, action: "labeled" | "unlabeled", label: SimLabel, senderId: number): void {
  const base = { action, repoId: repo.id, number: item.number, senderId, label };
  if (item.pull) state.emit({ event: "pull_request", ...base });
  else state.emit({ event: "issues", ...base });
}

/** Attaches labels (creating missing ones like GitHub does); returns the newly attached. */
export function attachLabels(state: SimState, repo: SimRepo, item: SimIssue, names: string[], senderId: number): SimLabel[] {
  for (const name of names) validateLabel({ name });
  const attached: SimLabel[] = [];
  for (const name of names) {
    const label = findOrCreate(state, repo, name, senderId);
    const key = label.name.toLowerCase();
    if (item.labels.includes(key)) continue;
    item.labels.push(key);
    item.updatedAt = state.clock.now();
    attached.push(label);
  }
  return attached;
}

/** `labeled` for each label, after the item was opened with them (GitHub sends both). */
export function announceLabels(state: SimState, repo: SimRepo, item: SimIssue, labels: SimLabel[], senderId: number): void {
  for (const label of labels) emitLabelEvent(state, repo, item, "labeled", label, senderId);
}

/** Adds labels and emits `labeled` for each new one. */
export function addLabels(state: SimState, repo: SimRepo, item: SimIssue, names: string[], senderId: number): SimLabel[] {
  for (const name of names) validateLabel({ name });
  for (const name of names) {
    for (const label of attachLabels(state, repo, item, [name], senderId)) emitLabelEvent(state, repo, item, "labeled", label, senderId);
  }
  return labelsOf(repo, item);
}

export function removeLabel(state: SimState, repo: SimRepo, item: SimIssue, name: string, senderId: number): SimLabel[] {
  const key = name.toLowerCase();
  const label = repo.labels.get(key);
  if (!label || !item.labels.includes(key)) throw new GitHubApiError(404, "Label does not exist");
  item.labels = item.labels.filter((k) => k !== key);
  item.updatedAt = state.clock.now();
  emitLabelEvent(state, repo, item, "unlabeled", label, senderId);
  return labelsOf(repo, item);
}

/** PUT /repos/{o}/{r}/issues/{n}/labels: replace the whole set. */
export function setLabels(state: SimState, repo: SimRepo, item: SimIssue, names: string[], senderId: number): SimLabel[] {
  const wanted = new Set(names.map((n) => n.trim().toLowerCase()));
  for (const key of [...item.labels]) {
    if (!wanted.has(key)) removeLabel(state, repo, item, key, senderId);
  }
  return addLabels(state, repo, item, names, senderId);
}

export interface LabelEdit {
  new_name?: string;
  color?: string;
  description?: string | null;
}

function requireLabel(repo: SimRepo, name: string): SimLabel {
  const label = repo.labels.get(name.trim().toLowerCase());
  if (!label) throw new GitHubApiError(404, "Not Found");
  return label;
}

/** PATCH /repos/{o}/{r}/labels/{name}: renames (Items keep it) or recolours; `label` edited with `changes`. */
export function editLabel(state: SimState, repo: SimRepo, name: string, edit: LabelEdit, senderId: number): SimLabel {
  const label = requireLabel(repo, name);
  const newName = edit.new_name?.trim() ?? label.name;
  validateLabel({ name: newName, ...(edit.color !== undefined ? { color: edit.color } : {}), description: edit.description ?? null });
  const oldKey = label.name.toLowerCase();
  const newKey = newName.toLowerCase();
  if (newKey !== oldKey && repo.labels.has(newKey)) throw validationFailed([{ resource: "Label", code: "already_exists", field: "name" }]);
  const changes: NonNullable<Extract<SimEvent, { event: "label" }>["changes"]> = {};
  if (newName !== label.name) changes.name = { from: label.name };
  if (edit.color !== undefined && edit.color.toLowerCase() !== label.color) changes.color = { from: label.color };
  if (edit.description !== undefined && edit.description !== label.description) changes.description = { from: label.description };
  label.name = newName;
  if (edit.color !== undefined) label.color = edit.color.toLowerCase();
  if (edit.description !== undefined) label.description = edit.description;
  if (newKey !== oldKey) {
    repo.labels.delete(oldKey);
    repo.labels.set(newKey, label);
    for (const item of state.itemsOf(repo)) item.labels = item.labels.map((key) => (key === oldKey ? newKey : key));
  }
  state.emit({ event: "label", action: "edited", repoId: repo.id, label, senderId, changes });
  return label;
}

/** DELETE /repos/{o}/{r}/labels/{name}: gone from the repository and its Items (no `unlabeled`), `label` deleted. */
export function deleteLabel(state: SimState, repo: SimRepo, name: string, senderId: number): void {
  const label = requireLabel(repo, name);
  const key = label.name.toLowerCase();
  repo.labels.delete(key);
  for (const item of state.itemsOf(repo)) item.labels = item.labels.filter((k) => k !== key);
  state.emit({ event: "label", action: "deleted", repoId: repo.id, label, senderId });
}
