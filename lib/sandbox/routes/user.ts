import type { components } from "@octokit/openapi-types";
import { GitHubApiError, notFound, requiresAuthentication } from "../api-error";
import type { Caller } from "../auth";
import { renderInstallation } from "../render/app";
import { renderRepository } from "../render/repository";
import { renderPrivateUser, renderSimpleUser } from "../render/user";
import { rateLimits } from "../rate-limit-body";
import { numberParam, paginate, param, type RestContext, type RouteTable } from "../rest";

type Schemas = components["schemas"];

function userOf(ctx: RestContext): Extract<Caller, { kind: "user" }> {
  if (ctx.caller.kind === "user") return ctx.caller;
  if (ctx.caller.kind === "anonymous") throw requiresAuthentication();
  throw new GitHubApiError(403, "Resource not accessible by integration");
}

function getUser(ctx: RestContext) {
  return { body: renderPrivateUser(ctx.render, userOf(ctx).user) satisfies Schemas["private-user"] };
}

/** GET /users/{username}: anyone's public profile, by login (case-insensitive), with its account id. */
function getUserByLogin(ctx: RestContext) {
  const account = ctx.state.findAccount(param(ctx, "username"));
  if (!account) throw notFound();
  return { body: renderSimpleUser(ctx.render, account) satisfies Schemas["simple-user"] };
}

/**
 * The repositories of an installation the signed-in user has explicit access to (GitHub: "explicit
 * permission (:read, :write, or :admin)"): the owner and the collaborators, not everyone who can
 * read a public repository.
 */
function reposFor(ctx: RestContext, installationId: number, userId: number) {
  const installation = ctx.state.installation(installationId);
  return {
    installation,
    repos: ctx.state.installationRepos(installation).filter((repo) => repo.ownerId === userId || repo.collaborators.has(userId)),
  };
}

function userInstallations(ctx: RestContext) {
  const { user } = userOf(ctx);
  const installations = [...ctx.state.installations.values()].filter((i) => reposFor(ctx, i.id, user.id).repos.length > 0);
  const { page, headers } = paginate(ctx, installations);
  const body = {
    total_count: installations.length,
    installations: page.map((i) => renderInstallation(ctx.render, i)),
  } satisfies { total_count: number; installations: Schemas["installation"][] };
  return { body, headers };
}

function userInstallationRepos(ctx: RestContext) {
  const { user } = userOf(ctx);
  const { installation, repos } = reposFor(ctx, numberParam(ctx, "installation_id"), user.id);
  if (repos.length === 0) throw notFound();
  const { page, headers } = paginate(ctx, repos);
  const body = {
    total_count: repos.length,
    repository_selection: installation.repositorySelection,
    repositories: page.map((repo) => renderRepository(ctx.render, repo, ctx.state.permissionOf(repo, user.id))),
  } satisfies { total_count: number; repository_selection?: string; repositories: Schemas["repository"][] };
  return { body, headers };
}

function getRateLimit(ctx: RestContext) {
  const core = ctx.core.rateLimits.bucket(ctx.caller.key, "core");
  const graphql = ctx.core.rateLimits.bucket(ctx.caller.key, "graphql");
  return { body: rateLimits(core, graphql) satisfies Schemas["rate-limit-overview"] };
}

export const userRoutes: RouteTable = [
  ["GET", "/user", { handler: getUser }],
  ["GET", "/users/{username}", { handler: getUserByLogin }],
  ["GET", "/user/installations", { handler: userInstallations }],
  ["GET", "/user/installations/{installation_id}/repositories", { handler: userInstallationRepos }],
  ["GET", "/rate_limit", { free: true, handler: getRateLimit }],
];
