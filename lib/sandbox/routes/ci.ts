import { actorId } from "../access";
import { validationFailed } from "../api-error";
import { asObject } from "../http-util";
import { renderCheckSuite, renderStatus } from "../render/ci";
import { renderRepository } from "../render/repository";
import { numberParam, paginate, param, repoOf, repoScoped, type RestContext } from "../rest";
import { combinedState, createCommitStatus, latestStatuses } from "../state/ci";
import { replyToReviewComment } from "../state/review-threads";
import { renderReviewComment } from "../render/review";
import { pullOf } from "./items";

/**
 * What CI and reviewers leave on a pull request besides check runs and reviews: commit
 * statuses, the check suites of a commit, and replies in a review thread.
 */

async function commitOf(ctx: RestContext, permission: "statuses" | "checks") {
  const repo = repoOf(ctx, { permission, level: "read" });
  const ref = param(ctx, "ref");
  const sha = await ctx.core.git.resolve(repo.gitDir, ref);
  if (!sha) throw validationFailed([{ resource: "Commit", field: "ref", code: "invalid", message: `No commit found for SHA: ${ref}` }]);
  return { repo, sha };
}

async function postStatus(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "statuses", level: "write", role: "write" });
  const sha = param(ctx, "sha");
  if (!(await ctx.core.git.resolve(repo.gitDir, sha))) throw validationFailed([{ resource: "Status", field: "sha", code: "invalid", message: `No commit found for SHA: ${sha}` }]);
  const status = createCommitStatus(ctx.state, repo, sha, asObject(ctx.body), actorId(ctx.state, ctx.caller));
  return { status: 201, body: renderStatus(ctx.render, repo, status) };
}

async function listStatuses(ctx: RestContext) {
  const { repo, sha } = await commitOf(ctx, "statuses");
  const all = [...ctx.state.statuses.values()].filter((s) => s.repoId === repo.id && s.sha === sha).sort((a, b) => b.id - a.id);
  const { page, headers } = paginate(ctx, all);
  return { body: page.map((s) => renderStatus(ctx.render, repo, s)), headers };
}

async function combinedStatus(ctx: RestContext) {
  const { repo, sha } = await commitOf(ctx, "statuses");
  const statuses = latestStatuses(ctx.state, repo, sha);
  const api = `${ctx.render.baseUrl}/repos/${ctx.state.fullName(repo)}`;
  return {
    body: {
      state: combinedState(statuses),
      statuses: statuses.map((s) => renderStatus(ctx.render, repo, s)),
      sha,
      total_count: statuses.length,
      repository: renderRepository(ctx.render, repo),
      commit_url: `${api}/commits/${sha}`,
      url: `${api}/commits/${sha}/status`,
    },
  };
}

async function listCheckSuites(ctx: RestContext) {
  const { repo, sha } = await commitOf(ctx, "checks");
  const ids = [...new Set([...ctx.state.checkRuns.values()].filter((r) => r.repoId === repo.id && r.headSha === sha).map((r) => r.checkSuiteId))];
  const suites = ids.map((id) => renderCheckSuite(ctx.render, repo, id)).filter((s) => s !== null);
  const { page, headers } = paginate(ctx, suites);
  return { body: { total_count: suites.length, check_suites: page }, headers };
}

function postReply(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "write", "read");
  const reply = replyToReviewComment(ctx.state, repo, item, numberParam(ctx, "comment_id"), asObject(ctx.body).body, actorId(ctx.state, ctx.caller));
  return { status: 201, body: renderReviewComment(ctx.render, repo, reply) };
}

export const ciRoutes = repoScoped({
  "/statuses/{sha}": { POST: postStatus },
  "/commits/{ref}/statuses": { GET: listStatuses },
  "/commits/{ref}/status": { GET: combinedStatus },
  "/commits/{ref}/check-suites": { GET: listCheckSuites },
  "/pulls/{pull_number}/comments/{comment_id}/replies": { POST: postReply },
});
