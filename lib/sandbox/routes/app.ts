import type { components } from "@octokit/openapi-types";
import { notFound, validationFailed } from "../api-error";
import { tokenRepoIds } from "../access";
import { isoSeconds } from "../sim-clock";
import type { AppPermissions } from "../model";
import { renderApp, renderInstallation } from "../render/app";
import { renderRepository } from "../render/repository";
import { numberParam, paginate, param, type RestContext, type RouteTable } from "../rest";
import { mintInstallationToken } from "../state/tokens";
import { asObject } from "../http-util";
import { GitHubApiError } from "../api-error";

type Schemas = components["schemas"];

function listInstallations(ctx: RestContext) {
  const all = [...ctx.state.installations.values()].map((i) => renderInstallation(ctx.render, i) satisfies Schemas["installation"]);
  const { page, headers } = paginate(ctx, all);
  return { body: page, headers };
}

function createToken(ctx: RestContext) {
  const installation = ctx.state.installation(numberParam(ctx, "installation_id"));
  const body = asObject(ctx.body);
  const repositories = body.repositories;
  const repositoryIds = body.repository_ids;
  const permissions = body.permissions;
  if (repositories !== undefined && !Array.isArray(repositories)) throw validationFailed([{ resource: "Token", field: "repositories", code: "invalid" }]);
  if (repositoryIds !== undefined && !Array.isArray(repositoryIds)) throw validationFailed([{ resource: "Token", field: "repository_ids", code: "invalid" }]);
  if (permissions !== undefined && (typeof permissions !== "object" || permissions === null)) throw validationFailed([{ resource: "Token", field: "permissions", code: "invalid" }]);
  const token = mintInstallationToken(ctx.state, installation, {
    ...(repositories ? { repositories: repositories.map(String) } : {}),
    ...(repositoryIds ? { repository_ids: repositoryIds.map(Number) } : {}),
    ...(permissions ? { permissions: permissions as AppPermissions } : {}),
  });
  const narrowed = token.repoIds !== null;
  const result = {
    token: token.token,
    expires_at: isoSeconds(token.expiresAt ?? 0),
    permissions: token.permissions,
    repository_selection: narrowed ? "selected" : installation.repositorySelection,
    ...(narrowed ? { repositories: [...(token.repoIds ?? [])].map((id) => renderRepository(ctx.render, ctx.state.repo(id))) } : {}),
  } satisfies Schemas["installation-token"];
  return { status: 201, body: result };
}

function installationRepositories(ctx: RestContext) {
  if (ctx.caller.kind !== "installation") {
    throw new GitHubApiError(403, "You must authenticate with an installation access token in order to list repositories for an installation.");
  }
  const ids = tokenRepoIds(ctx.state, ctx.caller);
  const repos = [...ids].map((id) => renderRepository(ctx.render, ctx.state.repo(id)));
  const { page, headers } = paginate(ctx, repos);
  const body = {
    total_count: repos.length,
    repository_selection: ctx.caller.token.repoIds ? "selected" : ctx.caller.installation.repositorySelection,
    repositories: page,
  } satisfies { total_count: number; repositories: Schemas["repository"][]; repository_selection?: string };
  return { body, headers };
}

function installationFor(ctx: RestContext, accountLogin: string, repoName?: string) {
  const account = ctx.state.findAccount(accountLogin);
  if (!account) throw notFound();
  const installation = [...ctx.state.installations.values()].find((i) => i.accountId === account.id);
  if (!installation) throw notFound();
  if (repoName !== undefined) {
    const repo = ctx.state.findRepo(accountLogin, repoName);
    if (!repo || !ctx.state.installationRepos(installation).some((r) => r.id === repo.id)) throw notFound();
  }
  return { body: renderInstallation(ctx.render, installation) satisfies Schemas["installation"] };
}

export const appRoutes: RouteTable = [
  ["GET", "/app", { auth: "app", handler: (ctx) => ({ body: renderApp(ctx.render) satisfies Schemas["integration"] }) }],
  ["GET", "/app/installations", { auth: "app", handler: listInstallations }],
  [
    "GET",
    "/app/installations/{installation_id}",
    { auth: "app", handler: (ctx) => ({ body: renderInstallation(ctx.render, ctx.state.installation(numberParam(ctx, "installation_id"))) satisfies Schemas["installation"] }) },
  ],
  ["POST", "/app/installations/{installation_id}/access_tokens", { auth: "app", handler: createToken }],
  ["GET", "/installation/repositories", { handler: installationRepositories }],
  ["GET", "/repos/{owner}/{repo}/installation", { auth: "app", handler: (ctx) => installationFor(ctx, param(ctx, "owner"), param(ctx, "repo")) }],
  ["GET", "/orgs/{org}/installation", { auth: "app", handler: (ctx) => installationFor(ctx, param(ctx, "org")) }],
  ["GET", "/users/{username}/installation", { auth: "app", handler: (ctx) => installationFor(ctx, param(ctx, "username")) }],
];
