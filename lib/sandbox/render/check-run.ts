import type { components } from "@octokit/openapi-types";
import { isoOrNull, isoSeconds } from "../sim-clock";
import type { SimCheckRun, SimRepo } from "../model";
import { renderCheckApp } from "./ci";
import type { RenderContext } from "./context";
import { pullRequestsFor } from "./pull-requests-for";
import { renderRepository } from "./repository";

type Schemas = components["schemas"];

export function renderCheckRun(ctx: RenderContext, repo: SimRepo, run: SimCheckRun): Schemas["check-run"] {
  const api = `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}`;
  return {
    id: run.id,
    head_sha: run.headSha,
    node_id: run.nodeId,
    external_id: run.externalId,
    url: `${api}/check-runs/${run.id}`,
    html_url: `${ctx.baseUrl}/${ctx.state.fullName(repo)}/runs/${run.id}`,
    details_url: run.detailsUrl,
    status: run.status,
    conclusion: run.conclusion,
    started_at: isoSeconds(run.startedAt),
    completed_at: isoOrNull(run.completedAt),
    output: {
      title: run.output.title,
      summary: run.output.summary,
      text: run.output.text,
      annotations_count: 0,
      annotations_url: `${api}/check-runs/${run.id}/annotations`,
    },
    name: run.name,
    check_suite: { id: run.checkSuiteId },
    app: renderCheckApp(ctx, run.appId),
    pull_requests: pullRequestsFor(ctx, repo, run.headSha),
  } satisfies Schemas["check-run"];
}

/** The webhook's check_run also carries the actions and a fuller check_suite. */
export function renderCheckRunForWebhook(ctx: RenderContext, repo: SimRepo, run: SimCheckRun): Record<string, unknown> {
  const base = renderCheckRun(ctx, repo, run);
  const pulls = pullRequestsFor(ctx, repo, run.headSha);
  return {
    ...base,
    actions: run.actions,
    check_suite: {
      id: run.checkSuiteId,
      node_id: ctx.state.nodeId("CheckSuite", run.checkSuiteId),
      head_branch: pulls[0]?.head.ref ?? null,
      head_sha: run.headSha,
      status: run.status,
      conclusion: run.conclusion,
      url: `${ctx.baseUrl}/repos/${ctx.state.fullName(repo)}/check-suites/${run.checkSuiteId}`,
      before: null,
      after: run.headSha,
      pull_requests: pulls,
      app: renderCheckApp(ctx, run.appId),
      repository: renderRepository(ctx, repo),
      created_at: base.started_at,
      updated_at: base.completed_at ?? base.started_at,
    },
  };
}
