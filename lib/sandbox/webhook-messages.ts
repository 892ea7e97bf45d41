import type { components } from "@octokit/openapi-types";
import type { SimAccount, SimInstallation, SimRepo } from "./model";
import { renderApp, renderInstallation } from "./render/app";
import { renderCheckRunForWebhook } from "./render/check-run";
import { renderCheckSuite, renderStatusForWebhook } from "./render/ci";
import type { RenderContext } from "./render/context";
import { renderComment, renderIssue } from "./render/issue";
import { renderLabel } from "./render/label";
import { renderPull } from "./render/pull";
import { renderRepository } from "./render/repository";
import { renderReview, renderReviewComment } from "./render/review";
import { renderSimpleUser } from "./render/user";
import type { SimEvent } from "./state/events";
import { threadsOf } from "./state/review-threads";

export interface WebhookMessage {
  event: SimEvent["event"];
  action: string;
  installation: SimInstallation;
  payload: Record<string, unknown>;
}

function organization(ctx: RenderContext, owner: SimAccount): { organization?: components["schemas"]["organization-simple"] } {
  if (owner.type !== "Organization") return {};
  const api = `${ctx.baseUrl}/orgs/${owner.login}`;
  return {
    organization: {
      login: owner.login,
      id: owner.id,
      node_id: owner.nodeId,
      url: api,
      repos_url: `${api}/repos`,
      events_url: `${api}/events`,
      hooks_url: `${api}/hooks`,
      issues_url: `${api}/issues`,
      members_url: `${api}/members{/member}`,
      public_members_url: `${api}/public_members{/member}`,
      avatar_url: `${ctx.baseUrl}/_sim/avatars/${owner.id}`,
      description: null,
    },
  };
}

function repoSummary(ctx: RenderContext, repo: SimRepo): { id: number; node_id: string; name: string; full_name: string; private: boolean } {
  return { id: repo.id, node_id: repo.nodeId, name: repo.name, full_name: ctx.state.fullName(repo), private: repo.private };
}

/**
 * Renders a state event into the webhook GitHub would send the App, or null when no
 * installation of the App covers it (GitHub sends nothing then).
 */
export function webhookFor(ctx: RenderContext, event: SimEvent): WebhookMessage | null {
  const { state } = ctx;
  const sender = renderSimpleUser(ctx, state.account(event.senderId));
  if (event.event === "installation") {
    const installation = state.installation(event.installationId);
    const repos = state.installationRepos(installation).map((r) => repoSummary(ctx, r));
    const payload: Record<string, unknown> = {
      action: event.action,
      installation: { ...renderInstallation(ctx, installation), node_id: state.nodeId("Installation", installation.id), app: renderApp(ctx) },
    };
    if (event.action === "created" || event.action === "deleted") payload.repositories = repos;
    if (event.action === "created") payload.requester = null;
    payload.sender = sender;
    return { event: event.event, action: event.action, installation, payload };
  }
  if (event.event === "installation_repositories") {
    const installation = state.installation(event.installationId);
    return {
      event: event.event,
      action: event.action,
      installation,
      payload: {
        action: event.action,
        installation: { ...renderInstallation(ctx, installation), node_id: state.nodeId("Installation", installation.id) },
        repository_selection: installation.repositorySelection,
        repositories_added: event.added.map((id) => repoSummary(ctx, state.repo(id))),
        repositories_removed: event.removed.map((id) => repoSummary(ctx, state.repo(id))),
        requester: null,
        sender,
      },
    };
  }
  const repo = state.repo(event.repoId);
  const installation = state.installationForRepo(repo);
  if (!installation) return null;
  const common = {
    repository: renderRepository(ctx, repo),
    ...organization(ctx, state.account(repo.ownerId)),
    sender,
    installation: { id: installation.id, node_id: state.nodeId("Installation", installation.id) },
  };
  const label = "label" in event && event.label ? { label: renderLabel(ctx, repo, event.label) } : {};
  let body: Record<string, unknown>;
  switch (event.event) {
    case "issues":
      body = { issue: renderIssue(ctx, repo, state.item(repo, event.number)), ...label, ...(event.changes ? { changes: event.changes } : {}) };
      break;
    case "pull_request":
      body = {
        number: event.number,
        pull_request: renderPull(ctx, repo, state.item(repo, event.number)),
        ...label,
        ...(event.changes ? { changes: event.changes } : {}),
        ...(event.action === "synchronize" ? { before: event.before, after: event.after } : {}),
      };
      break;
    case "label":
      body = { label: renderLabel(ctx, repo, event.label), ...(event.changes ? { changes: event.changes } : {}) };
      break;
    case "issue_comment": {
      const comment = state.comments.get(event.commentId);
      if (!comment) return null;
      body = {
        issue: renderIssue(ctx, repo, state.item(repo, event.number)),
        comment: renderComment(ctx, repo, comment),
        ...(event.changes ? { changes: event.changes } : {}),
      };
      break;
    }
    case "push": {
      // GitHub's push payload carries no action
      const pusher = state.account(event.senderId);
      const web = `${ctx.baseUrl}/${state.fullName(repo)}`;
      const commits = event.commits.map((c) => {
        const author = { name: c.author.name, email: c.author.email, username: c.author.name };
        return {
          id: c.id,
          tree_id: c.id,
          distinct: true,
          message: c.message,
          timestamp: new Date(c.timestamp).toISOString(),
          url: `${web}/commit/${c.id}`,
          author,
          committer: author,
          added: c.added,
          removed: c.removed,
          modified: c.modified,
        };
      });
      const payload = {
        ref: event.ref,
        before: event.before,
        after: event.after,
        created: /^0+$/.test(event.before),
        deleted: /^0+$/.test(event.after),
        forced: event.forced,
        base_ref: null,
        compare: `${web}/compare/${event.before.slice(0, 12)}...${event.after.slice(0, 12)}`,
        commits,
        head_commit: commits.at(-1) ?? null,
        pusher: { name: pusher.login, email: pusher.email ?? `${pusher.login}@users.noreply.sim` },
        ...common,
      };
      return { event: event.event, action: event.action, installation, payload };
    }
    case "pull_request_review": {
      const review = state.reviews.get(event.reviewId);
      if (!review) return null;
      body = { review: renderReview(ctx, repo, review), pull_request: renderPull(ctx, repo, state.item(repo, event.number)) };
      break;
    }
    case "pull_request_review_comment": {
      const comment = state.reviewComments.get(event.commentId);
      if (!comment) return null;
      body = { comment: renderReviewComment(ctx, repo, comment), pull_request: renderPull(ctx, repo, state.item(repo, event.number)) };
      break;
    }
    case "check_suite": {
      const suite = renderCheckSuite(ctx, repo, event.checkSuiteId);
      if (!suite) return null;
      body = { check_suite: suite };
      break;
    }
    case "status": {
      // GitHub's status payload carries no action
      const status = state.statuses.get(event.statusId);
      if (!status) return null;
      return { event: event.event, action: event.action, installation, payload: { ...renderStatusForWebhook(ctx, repo, status), ...common } };
    }
    case "pull_request_review_thread": {
      const item = state.item(repo, event.number);
      const thread = threadsOf(state, repo, item).find((t) => t.id === event.threadId);
      if (!thread) return null;
      body = {
        thread: { node_id: thread.nodeId, comments: thread.comments.map((c) => renderReviewComment(ctx, repo, c)) },
        pull_request: renderPull(ctx, repo, item),
      };
      break;
    }
    case "repository":
      if (event.action === "renamed") body = { changes: event.changes };
      else if (event.action === "transferred") {
        const from = state.account(event.fromOwnerId);
        body = { changes: { owner: { from: from.type === "Organization" ? { organization: organization(ctx, from).organization } : { user: renderSimpleUser(ctx, from) } } } };
      } else body = {};
      break;
    case "check_run": {
      const run = state.checkRuns.get(event.checkRunId);
      if (!run) return null;
      body = {
        check_run: renderCheckRunForWebhook(ctx, repo, run),
        ...(event.identifier !== undefined ? { requested_action: { identifier: event.identifier } } : {}),
      };
      break;
    }
  }
  return { event: event.event, action: event.action, installation, payload: { action: event.action, ...body, ...common } };
}
