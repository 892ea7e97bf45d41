import type { components } from "@octokit/openapi-types";
import { isoSeconds } from "../sim-clock";
import { ROLE_RANK, type RepoPermission, type SimRepo } from "../model";
import type { RenderContext } from "./context";
import { renderSimpleUser } from "./user";

type Schemas = components["schemas"];

export function repoPermissions(permission: RepoPermission): NonNullable<Schemas["full-repository"]["permissions"]> {
  const level = ROLE_RANK[permission];
  return { admin: level >= ROLE_RANK.admin, maintain: level >= ROLE_RANK.maintain, push: level >= ROLE_RANK.write, triage: level >= ROLE_RANK.triage, pull: level >= ROLE_RANK.read };
}

export function renderRepository(ctx: RenderContext, repo: SimRepo, permission?: RepoPermission) {
  const owner = ctx.state.account(repo.ownerId);
  const full = `${owner.login}/${repo.name}`;
  const api = `${ctx.baseUrl}/repos/${full}`;
  const host = new URL(ctx.baseUrl).host;
  const openIssues = ctx.state.itemsOf(repo).filter((i) => i.state === "open").length;
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: full,
    license: null,
    forks: 0,
    ...(permission ? { permissions: repoPermissions(permission) } : {}),
    owner: renderSimpleUser(ctx, owner),
    private: repo.private,
    html_url: `${ctx.baseUrl}/${full}`,
    description: repo.description,
    fork: false,
    url: api,
    archive_url: `${api}/{archive_format}{/ref}`,
    assignees_url: `${api}/assignees{/user}`,
    blobs_url: `${api}/git/blobs{/sha}`,
    branches_url: `${api}/branches{/branch}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    comments_url: `${api}/comments{/number}`,
    commits_url: `${api}/commits{/sha}`,
    compare_url: `${api}/compare/{base}...{head}`,
    contents_url: `${api}/contents/{+path}`,
    contributors_url: `${api}/contributors`,
    deployments_url: `${api}/deployments`,
    downloads_url: `${api}/downloads`,
    events_url: `${api}/events`,
    forks_url: `${api}/forks`,
    git_commits_url: `${api}/git/commits{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    git_url: `git://${host}/${full}.git`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    issue_events_url: `${api}/issues/events{/number}`,
    issues_url: `${api}/issues{/number}`,
    keys_url: `${api}/keys{/key_id}`,
    labels_url: `${api}/labels{/name}`,
    languages_url: `${api}/languages`,
    merges_url: `${api}/merges`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    pulls_url: `${api}/pulls{/number}`,
    releases_url: `${api}/releases{/id}`,
    ssh_url: `git@${host}:${full}.git`,
    stargazers_url: `${api}/stargazers`,
    statuses_url: `${api}/statuses/{sha}`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    tags_url: `${api}/tags`,
    teams_url: `${api}/teams`,
    trees_url: `${api}/git/trees{/sha}`,
    clone_url: `${ctx.baseUrl}/${full}.git`,
    mirror_url: null,
    hooks_url: `${api}/hooks`,
    svn_url: `${ctx.baseUrl}/${full}`,
    homepage: null,
    language: null,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    size: 0,
    default_branch: repo.defaultBranch,
    open_issues_count: openIssues,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: false,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: repo.private ? "private" : "public",
    pushed_at: isoSeconds(repo.pushedAt),
    created_at: isoSeconds(repo.createdAt),
    updated_at: isoSeconds(repo.updatedAt),
    allow_rebase_merge: true,
    allow_squash_merge: true,
    allow_merge_commit: true,
    allow_auto_merge: false,
    delete_branch_on_merge: false,
    allow_forking: false,
    web_commit_signoff_required: false,
    open_issues: openIssues,
    watchers: 0,
  } satisfies Schemas["repository"];
}

export function renderFullRepository(ctx: RenderContext, repo: SimRepo, permission?: RepoPermission): Schemas["full-repository"] {
  const owner = ctx.state.account(repo.ownerId);
  const base = renderRepository(ctx, repo, permission);
  return {
    ...base,
    has_discussions: false,
    subscribers_count: 0,
    network_count: 0,
    ...(owner.type === "Organization" ? { organization: renderSimpleUser(ctx, owner) } : {}),
  } satisfies Schemas["full-repository"];
}
