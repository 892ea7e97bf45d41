import type { components } from "@octokit/openapi-types";
import { isoSeconds } from "../sim-clock";
import type { SimRepo } from "../model";
import type { SimCommitStatus } from "../model";
import { CI_APP, ciBot, suiteConclusion, suiteRuns } from "../state/ci";
import { suiteOf } from "../state/checks";
import { renderApp } from "./app";
import { pullRequestsFor } from "./pull-requests-for";
import type { RenderContext } from "./context";
import { renderRepository } from "./repository";
import { renderSimpleUser } from "./user";

type Schemas = components["schemas"];

/** The App a check run belongs to: the App itself, or the simulated CI (GitHub Actions). */
export function renderCheckApp(ctx: RenderContext, appId: number): NonNullable<Schemas["integration"]> {
  if (appId === ctx.state.app.id) return renderApp(ctx);
  const owner = renderSimpleUser(ctx, ciBot(ctx.state));
  const at = isoSeconds(ctx.state.app.createdAt);
  return {
    id: CI_APP.id,
    slug: CI_APP.slug,
    node_id: ctx.state.nodeId("App", CI_APP.id),
    owner,
    name: CI_APP.name,
    description: "Automate your workflow from idea to production",
    external_url: "https://help.github.com/en/actions",
    html_url: `${ctx.baseUrl}/apps/${CI_APP.slug}`,
    created_at: at,
    updated_at: at,
    permissions: { checks: "write", statuses: "write", contents: "write", metadata: "read" },
    events: ["check_run", "check_suite", "push", "pull_request"],
  };
}

/** A check suite as the check_suite webhook and GET …/check-suites carry it; one without check runs yet (requested) is queued. */
export function renderCheckSuite(ctx: RenderContext, repo: SimRepo, suiteId: number): Record<string, unknown> | null {
  const runs = suiteRuns(ctx.state, suiteId);
  const suite = suiteOf(ctx.state, suiteId);
  if (!suite) return null;
  const pulls = pullRequestsFor(ctx, repo, suite.headSha);
  const conclusion = suiteConclusion(runs);
  const api = `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}`;
  const started = runs.length ? Math.min(...runs.map((r) => r.startedAt)) : ctx.state.clock.now();
  const updated = runs.length ? Math.max(...runs.map((r) => r.completedAt ?? r.startedAt)) : started;
  return {
    id: suiteId,
    node_id: ctx.state.nodeId("CheckSuite", suiteId),
    head_branch: pulls[0]?.head.ref ?? null,
    head_sha: suite.headSha,
    status: runs.length === 0 ? "queued" : conclusion === null ? "in_progress" : "completed",
    conclusion,
    url: `${api}/check-suites/${suiteId}`,
    before: null,
    after: suite.headSha,
    pull_requests: pulls,
    app: renderCheckApp(ctx, suite.appId),
    repository: renderRepository(ctx, repo),
    created_at: isoSeconds(started),
    updated_at: isoSeconds(updated),
    latest_check_runs_count: runs.length,
    check_runs_url: `${api}/check-suites/${suiteId}/check-runs`,
    // the renderer reads no git: the head commit is named, its message and people are left blank
    head_commit: {
      id: suite.headSha,
      tree_id: suite.headSha,
      message: "",
      timestamp: isoSeconds(started),
      author: { name: "", email: "" },
      committer: { name: "", email: "" },
    },
  };
}

/** A commit status, as GET …/statuses lists it. */
export function renderStatus(ctx: RenderContext, repo: SimRepo, s: SimCommitStatus): Schemas["status"] {
  const api = `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}`;
  return {
    url: `${api}/statuses/${s.sha}`,
    avatar_url: null,
    id: s.id,
    node_id: s.nodeId,
    state: s.state,
    description: s.description,
    target_url: s.targetUrl,
    context: s.context,
    created_at: isoSeconds(s.createdAt),
    updated_at: isoSeconds(s.updatedAt),
    creator: renderSimpleUser(ctx, ctx.state.account(s.creatorId)),
  };
}

/** The `status` webhook's own fields (GitHub's payload has no action). */
export function renderStatusForWebhook(ctx: RenderContext, repo: SimRepo, s: SimCommitStatus): Record<string, unknown> {
  const branches = ctx.state
    .itemsOf(repo)
    .filter((i) => i.pull && i.pull.headSha === s.sha)
    .map((i) => ({ name: i.pull!.headRef, commit: { sha: s.sha, url: `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}/commits/${s.sha}` }, protected: false }));
  return {
    id: s.id,
    sha: s.sha,
    name: ctx.state.fullName(repo),
    avatar_url: null,
    target_url: s.targetUrl,
    context: s.context,
    description: s.description,
    state: s.state,
    commit: { sha: s.sha, url: `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}/commits/${s.sha}` },
    branches,
    created_at: isoSeconds(s.createdAt),
    updated_at: isoSeconds(s.updatedAt),
  };
}
