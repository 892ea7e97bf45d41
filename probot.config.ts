// The Probot app: which webhook events Atelier listens to and the lib function each one calls.
// It knows nothing of HTTP (app/api/github/webhooks/route.ts verifies and hands deliveries in)
// nor of BullMQ (the WorkQueue it is given is).
import type { ApplicationFunction, Probot } from "probot";
import type { CheckRunEventOutcome, CheckRunEventPayload } from "./lib/mirror/check-run-actions";
import type { IssueEventPayload, TickOutcome } from "./lib/notify/dashboard-issue";
import type { WebhookDeps } from "./lib/triggers/webhook-events";
import { onInstallationWebhook, onItemWebhook, onLabelWebhook, onPushWebhook } from "./lib/triggers/webhook-events";
import { onCheckWebhook } from "./lib/triggers/check-webhooks";

type Payload = Record<string, unknown>;

export interface AtelierAppDeps extends WebhookDeps {
  /**
   * A check run's button (approve, retry, cancel) or "Re-run": the operator actions, permission
   * checked, once per (check run, action, identifier, sender) whatever the delivery id.
   */
  onCheckRunAction(payload: CheckRunEventPayload, deliveryId: string): Promise<CheckRunEventOutcome>;
  /**
   * An `issues` or `issue_comment` delivery, first offered to the dashboard issue: null when it
   * is about another issue; otherwise a tick's outcome, and the triggers never hear of it.
   */
  onDashboardIssue(event: string, payload: IssueEventPayload, deliveryId: string): Promise<TickOutcome | null>;
}

export function atelierApp(deps: AtelierAppDeps): ApplicationFunction {
  return (app: Probot) => {
    // installation lifecycle → installations and repositories tables, schedulers, a first poll
    // a repository renamed, transferred or deleted → its rows follow its id, or it is retired (ADR 0070)
    app.on(["installation", "installation_repositories", "repository.renamed", "repository.transferred", "repository.deleted"], async (context) => {
      await onInstallationWebhook(deps, context.name, context.payload as unknown as Payload);
    });
    // an Item changed → a Hint (re-read it now); the poll remains the source of truth
    // (the dashboard issue is no Item: its edits are ticks, read by lib/notify/dashboard-issue.ts)
    app.on(["issues", "issue_comment"], async (context) => {
      const tick = await deps.onDashboardIssue(context.name, context.payload as unknown as IssueEventPayload, context.id);
      if (tick) deps.log.info({ event: context.name, action: context.payload.action, outcome: tick.tag }, "dashboard issue");
      else await onItemWebhook(deps, context.name, context.payload as unknown as Payload);
    });
    app.on("pull_request", async (context) => {
      await onItemWebhook(deps, context.name, context.payload as unknown as Payload);
    });
    // a comment, a review comment or a review written or edited → a Hint naming it (comments Loops)
    app.on(["pull_request_review", "pull_request_review_comment"], async (context) => {
      await onItemWebhook(deps, context.name, context.payload as unknown as Payload);
    });
    // a review thread resolved or unresolved → a Hint (item.review_threads)
    app.on("pull_request_review_thread", async (context) => {
      await onItemWebhook(deps, context.name, context.payload as unknown as Payload);
    });
    // a check or a commit status finished → a Hint for each open pull request of its commit (item.checks)
    app.on(["check_run.completed", "check_suite.completed", "status"], async (context) => {
      await onCheckWebhook(deps, context.name, context.payload as unknown as Payload);
    });
    // a declared label was deleted or renamed → poll now, whose preflight recreates it
    app.on("label", async (context) => {
      await onLabelWebhook(deps, context.payload as unknown as Payload);
    });
    // .github/atelier.yml changed → read the config again
    app.on("push", async (context) => {
      await onPushWebhook(deps, context.payload as unknown as Payload);
    });
    // check run buttons (approve, cancel, retry) and "Re-run" → the operator actions
    app.on(["check_run.requested_action", "check_run.rerequested"], async (context) => {
      const outcome = await deps.onCheckRunAction(context.payload as unknown as CheckRunEventPayload, context.id);
      deps.log.info({ action: context.payload.action, checkRun: context.payload.check_run.id, outcome: outcome.tag }, "check_run action");
    });
  };
}

export default atelierApp;
