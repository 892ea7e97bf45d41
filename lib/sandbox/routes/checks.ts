import type { components } from "@octokit/openapi-types";
import { actorId } from "../access";
import { GitHubApiError, validationFailed } from "../api-error";
import { asObject } from "../http-util";
import { renderCheckRun } from "../render/check-run";
import { numberParam, paginate, param, repoOf, repoScoped, type RestContext } from "../rest";
import { checkRun, createCheckRun, updateCheckRun, type CheckRunInput } from "../state/checks";

type Schemas = components["schemas"];

function requireApp(ctx: RestContext): void {
  if (ctx.caller.kind !== "installation") throw new GitHubApiError(403, "You must authenticate via a GitHub App.");
}

function checkInput(body: Record<string, unknown>): CheckRunInput {
  const output = body.output;
  if (output !== undefined && (typeof output !== "object" || output === null)) {
    throw validationFailed([{ resource: "CheckRun", field: "output", code: "invalid" }]);
  }
  if (body.actions !== undefined && !Array.isArray(body.actions)) throw validationFailed([{ resource: "CheckRun", field: "actions", code: "invalid" }]);
  return body as CheckRunInput;
}

async function postCheckRun(ctx: RestContext) {
  requireApp(ctx);
  const repo = repoOf(ctx, { permission: "checks", level: "write" });
  const input = checkInput(asObject(ctx.body));
  if (input.head_sha && !(await ctx.core.git.resolve(repo.gitDir, input.head_sha))) {
    throw validationFailed([{ resource: "CheckRun", field: "head_sha", code: "invalid", message: "No commit found for SHA: " + input.head_sha }]);
  }
  const run = createCheckRun(ctx.state, repo, input, actorId(ctx.state, ctx.caller));
  return { status: 201, body: renderCheckRun(ctx.render, repo, run) satisfies Schemas["check-run"] };
}

function patchCheckRun(ctx: RestContext) {
  requireApp(ctx);
  const repo = repoOf(ctx, { permission: "checks", level: "write" });
  const run = checkRun(ctx.state, repo, numberParam(ctx, "check_run_id"));
  const input = checkInput(asObject(ctx.body));
  delete input.head_sha;
  updateCheckRun(ctx.state, repo, run, input, actorId(ctx.state, ctx.caller));
  return { body: renderCheckRun(ctx.render, repo, run) satisfies Schemas["check-run"] };
}

function getCheckRun(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "checks", level: "read" });
  const run = checkRun(ctx.state, repo, numberParam(ctx, "check_run_id"));
  return { body: renderCheckRun(ctx.render, repo, run) satisfies Schemas["check-run"] };
}

/** GET /repos/{o}/{r}/commits/{ref}/check-runs — `ref` a sha, branch or tag. */
async function listForRef(ctx: RestContext) {
  const repo = repoOf(ctx, { permission: "checks", level: "read" });
  const ref = param(ctx, "ref");
  const sha = await ctx.core.git.resolve(repo.gitDir, ref);
  if (!sha) throw validationFailed([{ resource: "Commit", field: "ref", code: "invalid", message: `No commit found for SHA: ${ref}` }]);
  const name = ctx.query.get("check_name");
  const status = ctx.query.get("status");
  const latestOnly = (ctx.query.get("filter") ?? "latest") === "latest";
  let runs = [...ctx.state.checkRuns.values()]
    .filter((r) => r.repoId === repo.id && r.headSha === sha)
    .filter((r) => (!name || r.name === name) && (!status || r.status === status))
    .sort((a, b) => b.id - a.id);
  if (latestOnly) {
    const seen = new Set<string>();
    runs = runs.filter((r) => !seen.has(r.name) && seen.add(r.name));
  }
  const { page, headers } = paginate(ctx, runs);
  const body = {
    total_count: runs.length,
    check_runs: page.map((r) => renderCheckRun(ctx.render, repo, r) satisfies Schemas["check-run"]),
  } satisfies { total_count: number; check_runs: Schemas["check-run"][] };
  return { body, headers };
}

export const checkRoutes = repoScoped({
  "/check-runs": { POST: postCheckRun },
  "/check-runs/{check_run_id}": { GET: getCheckRun, PATCH: patchCheckRun },
  "/commits/{ref}/check-runs": { GET: listForRef },
});
