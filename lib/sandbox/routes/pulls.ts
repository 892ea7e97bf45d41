import type { components } from "@octokit/openapi-types";
import { actorId } from "../access";
import { GitHubApiError, validationFailed } from "../api-error";
import { asObject } from "../http-util";
import type { SimIssue, SimRepo } from "../model";
import { renderPull, renderPullSimple } from "../render/pull";
import { paginate, repoOf, repoScoped, stringField, type RestContext } from "../rest";
import { editIssue } from "../state/issues";
import { branchMoved, changeBase, createPull, markMerged, requirePull } from "../state/pulls";
import { issueEditOf } from "./issues";
import { pullOf } from "./items";

type Schemas = components["schemas"];

/** `owner:branch` or `branch` → branch, when the owner is the repository's. */
function branchOf(ctx: RestContext, repo: SimRepo, head: string): string | null {
  const colon = head.indexOf(":");
  if (colon < 0) return head;
  const owner = head.slice(0, colon);
  return owner.toLowerCase() === ctx.state.account(repo.ownerId).login.toLowerCase() ? head.slice(colon + 1) : null;
}

function listPulls(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "pull_requests", level: "read" });
  const state = ctx.query.get("state") ?? "open";
  if (!["open", "closed", "all"].includes(state)) throw validationFailed([{ resource: "PullRequest", field: "state", code: "invalid", value: state }]);
  const head = ctx.query.get("head");
  const headBranch = head ? branchOf(ctx, repo, head) : undefined;
  const base = ctx.query.get("base");
  const sort = ctx.query.get("sort") ?? "created";
  const direction = ctx.query.get("direction") ?? (sort === "created" ? "desc" : "asc");
  const items = ctx.state.itemsOf(repo).filter((item) => {
    const pull = item.pull;
    if (!pull) return false;
    if (state !== "all" && item.state !== state) return false;
    if (headBranch !== undefined && pull.headRef !== headBranch) return false;
    return !base || pull.baseRef === base;
  });
  const key = (i: SimIssue): number => (sort === "updated" ? i.updatedAt : i.createdAt);
  items.sort((a, b) => (direction === "asc" ? 1 : -1) * (key(a) - key(b) || a.number - b.number));
  const { page, headers } = paginate(ctx, items);
  return { body: page.map((item) => renderPullSimple(ctx.render, repo, item) satisfies Schemas["pull-request-simple"]), headers };
}

function getPull(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "read");
  const body = renderPull(ctx.render, repo, item) satisfies Schemas["pull-request"];
  ctx.core.requestMergeability(repo, item);
  return { body };
}

async function postPull(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "pull_requests", level: "write", role: "read" });
  const body = asObject(ctx.body);
  const title = stringField(body, "title", "PullRequest", true) ?? "";
  const headInput = stringField(body, "head", "PullRequest", true) ?? "";
  const base = stringField(body, "base", "PullRequest", true) ?? "";
  const head = branchOf(ctx, repo, headInput);
  const headSha = head ? await ctx.core.git.branchSha(repo.gitDir, head) : null;
  if (!head || !headSha) throw validationFailed([{ resource: "PullRequest", field: "head", code: "invalid" }]);
  const baseSha = await ctx.core.git.branchSha(repo.gitDir, base);
  if (!baseSha) throw validationFailed([{ resource: "PullRequest", field: "base", code: "invalid" }]);
  if (await ctx.core.git.isAncestor(repo.gitDir, headSha, baseSha)) {
    throw validationFailed([{ resource: "PullRequest", code: "custom", message: `No commits between ${base} and ${head}` }]);
  }
  const item = createPull(
    ctx.state,
    repo,
    { title, body: stringField(body, "body", "PullRequest") ?? null, head, headSha, base, baseSha, draft: body.draft === true },
    actorId(ctx.state, ctx.caller),
  );
  return { status: 201, body: renderPull(ctx.render, repo, item) satisfies Schemas["pull-request"] };
}

async function patchPull(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "write");
  const body = asObject(ctx.body);
  const sender = actorId(ctx.state, ctx.caller);
  const base = stringField(body, "base", "PullRequest");
  if (base !== undefined) {
    const baseSha = await ctx.core.git.branchSha(repo.gitDir, base);
    if (!baseSha) throw validationFailed([{ resource: "PullRequest", field: "base", code: "invalid" }]);
    changeBase(ctx.state, repo, item, base, baseSha, sender);
  }
  editIssue(ctx.state, repo, item, issueEditOf(body, "PullRequest"), sender);
  return { body: renderPull(ctx.render, repo, item) satisfies Schemas["pull-request"] };
}

async function mergePull(ctx: RestContext) {
  const { repo, item } = pullOf(ctx, "write");
  const pull = requirePull(item);
  if (item.state !== "open") throw new GitHubApiError(405, "Pull Request is not mergeable");
  const sender = actorId(ctx.state, ctx.caller);
  const body = asObject(ctx.body);
  const before = await ctx.core.git.branchSha(repo.gitDir, pull.baseRef);
  let sha: string;
  try {
    sha = await ctx.core.git.merge(repo.gitDir, {
      base: pull.baseRef,
      head: pull.headSha,
      message: stringField(body, "commit_title", "PullRequest") ?? `Merge pull request #${item.number} from ${pull.headRef}`,
      author: { name: ctx.state.account(sender).login, email: `${ctx.state.account(sender).login}@users.noreply.sim` },
    });
  } catch {
    throw new GitHubApiError(405, "Pull Request is not mergeable");
  }
  markMerged(ctx.state, repo, item, sha, sender);
  branchMoved(ctx.state, repo, pull.baseRef, before ?? "", sha, sender);
  return { body: { sha, merged: true, message: "Pull Request successfully merged" } satisfies Schemas["pull-request-merge-result"] };
}

export const pullRoutes = repoScoped({
  "/pulls": { GET: listPulls, POST: postPull },
  "/pulls/{pull_number}": { GET: getPull, PATCH: patchPull },
  "/pulls/{pull_number}/merge": { PUT: mergePull },
});
