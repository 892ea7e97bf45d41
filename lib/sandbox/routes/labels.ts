import type { components } from "@octokit/openapi-types";
import { actorId } from "../access";
import { GitHubApiError, validationFailed } from "../api-error";
import { renderLabel } from "../render/label";
import { paginate, param, repoOf, repoScoped, type RestContext } from "../rest";
import { addLabels, createLabel, deleteLabel, editLabel, labelsOf, removeLabel, setLabels, type LabelEdit } from "../state/labels";
import { itemOf } from "./items";

type Schemas = components["schemas"];

function listLabels(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level: "read" });
  const labels = [...repo.labels.values()].sort((a, b) => a.name.localeCompare(b.name));
  const { page, headers } = paginate(ctx, labels);
  return { body: page.map((l) => renderLabel(ctx.render, repo, l) satisfies Schemas["label"]), headers };
}

function getLabel(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level: "read" });
  const label = repo.labels.get(param(ctx, "name").toLowerCase());
  if (!label) throw new GitHubApiError(404, "Not Found");
  return { body: renderLabel(ctx.render, repo, label) satisfies Schemas["label"] };
}

function postLabel(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level: "write" });
  const body = (ctx.body ?? {}) as { name?: unknown; color?: unknown; description?: unknown };
  if (typeof body.name !== "string") throw validationFailed([{ resource: "Label", field: "name", code: "missing_field" }]);
  if (body.color !== undefined && typeof body.color !== "string") throw validationFailed([{ resource: "Label", field: "color", code: "invalid" }]);
  const label = createLabel(
    ctx.state,
    repo,
    {
      name: body.name,
      ...(typeof body.color === "string" ? { color: body.color } : {}),
      description: typeof body.description === "string" ? body.description : null,
    },
    actorId(ctx.state, ctx.caller),
  );
  return { status: 201, body: renderLabel(ctx.render, repo, label) satisfies Schemas["label"] };
}

function patchLabel(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level: "write" });
  const body = (ctx.body ?? {}) as Record<string, unknown>;
  const edit: LabelEdit = {};
  for (const field of ["new_name", "color"] as const) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== "string") throw validationFailed([{ resource: "Label", field, code: "invalid" }]);
    edit[field] = value;
  }
  if (body.description !== undefined) {
    if (body.description !== null && typeof body.description !== "string") throw validationFailed([{ resource: "Label", field: "description", code: "invalid" }]);
    edit.description = body.description;
  }
  const label = editLabel(ctx.state, repo, param(ctx, "name"), edit, actorId(ctx.state, ctx.caller));
  return { body: renderLabel(ctx.render, repo, label) satisfies Schemas["label"] };
}

function removeRepoLabel(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: ["issues", "pull_requests"], level: "write" });
  deleteLabel(ctx.state, repo, param(ctx, "name"), actorId(ctx.state, ctx.caller));
  return { status: 204 };
}

/** The label names of a POST/PUT body: `{labels: [...]}`, a bare array, or `[{name}]`. */
function labelNames(body: unknown): string[] {
  const list = Array.isArray(body) ? body : (body as { labels?: unknown } | undefined)?.labels;
  if (!Array.isArray(list)) throw validationFailed([{ resource: "Label", field: "labels", code: "missing_field" }]);
  return list.map((entry) => {
    if (typeof entry === "string") return entry;
    if (entry && typeof entry === "object" && typeof (entry as { name?: unknown }).name === "string") return (entry as { name: string }).name;
    throw validationFailed([{ resource: "Label", field: "labels", code: "invalid" }]);
  });
}

function itemLabels(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "read");
  return { body: labelsOf(repo, item).map((l) => renderLabel(ctx.render, repo, l) satisfies Schemas["label"]) };
}

function addItemLabels(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "write");
  const labels = addLabels(ctx.state, repo, item, labelNames(ctx.body), actorId(ctx.state, ctx.caller));
  return { body: labels.map((l) => renderLabel(ctx.render, repo, l) satisfies Schemas["label"]) };
}

function replaceItemLabels(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "write");
  const labels = setLabels(ctx.state, repo, item, labelNames(ctx.body), actorId(ctx.state, ctx.caller));
  return { body: labels.map((l) => renderLabel(ctx.render, repo, l) satisfies Schemas["label"]) };
}

function deleteItemLabel(ctx: RestContext) {
  const { repo, item } = itemOf(ctx, "write");
  const labels = removeLabel(ctx.state, repo, item, param(ctx, "name"), actorId(ctx.state, ctx.caller));
  return { body: labels.map((l) => renderLabel(ctx.render, repo, l) satisfies Schemas["label"]) };
}

export const labelRoutes = repoScoped({
  "/labels": { GET: listLabels, POST: postLabel },
  "/labels/{name}": { GET: getLabel, PATCH: patchLabel, DELETE: removeRepoLabel },
  "/issues/{issue_number}/labels": { GET: itemLabels, POST: addItemLabels, PUT: replaceItemLabels },
  "/issues/{issue_number}/labels/{name}": { DELETE: deleteItemLabel },
});
