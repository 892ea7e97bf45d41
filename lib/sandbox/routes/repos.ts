import type { components } from "@octokit/openapi-types";
import { roleOf } from "../access";
import { notFound } from "../api-error";
import type { TreeEntry } from "../git-repos";
import { renderFullRepository, repoPermissions } from "../render/repository";
import { renderSimpleUser } from "../render/user";
import { param, repoOf, repoScoped, type RestContext } from "../rest";
import type { RepoPermission, SimRepo } from "../model";

const LEGACY_PERMISSION: Record<RepoPermission, string> = { none: "none", read: "read", triage: "read", write: "write", maintain: "write", admin: "admin" };

type Schemas = components["schemas"];

function getRepo(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "metadata", level: "read" });
  return { body: renderFullRepository(ctx.render, repo, roleOf(ctx.state, ctx.caller, repo)) satisfies Schemas["full-repository"] };
}

function links(ctx: RestContext, repo: SimRepo, entry: TreeEntry, ref: string) {
  const full = ctx.state.fullName(repo);
  const url = `${ctx.core.baseUrl}/repos/${full}/contents/${entry.path}?ref=${encodeURIComponent(ref)}`;
  const kind = entry.type === "tree" ? "trees" : "blobs";
  const git = `${ctx.core.baseUrl}/repos/${full}/git/${kind}/${entry.sha}`;
  const html = `${ctx.core.baseUrl}/${full}/${entry.type === "tree" ? "tree" : "blob"}/${ref}/${entry.path}`;
  return {
    url,
    git_url: git,
    html_url: html,
    download_url: entry.type === "blob" ? `${ctx.core.baseUrl}/${full}/raw/${ref}/${entry.path}` : null,
    _links: { self: url, git, html },
  };
}

function entryType(entry: TreeEntry): "file" | "dir" | "submodule" {
  return entry.type === "tree" ? "dir" : entry.type === "commit" ? "submodule" : "file";
}

/** GET /repos/{o}/{r}/contents/{path}: base64 JSON, raw with `application/vnd.github.raw`. */
async function getContents(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "contents", level: "read" });
  const path = ctx.params.path ?? "";
  const ref = ctx.query.get("ref") || repo.defaultBranch;
  const found = await ctx.core.git.entries(repo.gitDir, ref, path);
  if (!found) throw notFound();
  const raw = /application\/vnd\.github(\.v3)?\.raw/.test(String(ctx.req.headers.accept ?? ""));
  if (found.kind === "dir") {
    const listing = found.entries.map((entry) => ({
      type: entryType(entry),
      size: entry.size,
      name: entry.path.split("/").pop() ?? entry.path,
      path: entry.path,
      sha: entry.sha,
      ...links(ctx, repo, entry, ref),
    })) satisfies Schemas["content-directory"];
    return { body: listing };
  }
  const entry = found.entries[0];
  if (!entry) throw notFound();
  const data = await ctx.core.git.blob(repo.gitDir, entry.sha);
  if (raw) return { raw: { contentType: "text/plain; charset=utf-8", data } };
  const file = {
    type: "file",
    encoding: "base64",
    size: data.length,
    name: entry.path.split("/").pop() ?? entry.path,
    path: entry.path,
    content: (data.toString("base64").match(/.{1,60}/g) ?? []).join("\n") + (data.length ? "\n" : ""),
    sha: entry.sha,
    ...links(ctx, repo, entry, ref),
  } satisfies Schemas["content-file"];
  return { body: file };
}

function collaboratorPermission(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "metadata", level: "read" });
  const user = ctx.state.findAccount(param(ctx, "username"));
  if (!user) throw notFound();
  const role = ctx.state.permissionOf(repo, user.id);
  const roleName = ctx.state.roleNameOf(repo, user.id);
  const body = {
    // the legacy field knows four values: maintain reads as write, triage as read (a custom role: its base's)
    permission: LEGACY_PERMISSION[role],
    role_name: roleName,
    user: {
      ...renderSimpleUser(ctx.render, user),
      permissions: repoPermissions(role),
      role_name: roleName,
    },
  } satisfies Schemas["repository-collaborator-permission"];
  return { body };
}

export const repoRoutes = repoScoped({
  "": { GET: getRepo },
  "/contents": { GET: getContents },
  "/contents/{path+}": { GET: getContents },
  "/collaborators/{username}/permission": { GET: collaboratorPermission },
});
