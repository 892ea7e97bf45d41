import { AtelierError } from "../errors";
import { claimCheckRunAction, releaseCheckRunAction } from "../store/github/acted-check-run-actions";
import type { Db } from "../store/kernel/db";
import { mirroredCheckRunId, runIdForCheckRun } from "../store/github/run-mirrors";
import { checkRunView, isCheckActionId, isPromptClipped } from "./check-run-view";
import { callGitHub, repoParams, type GitHubClient } from "./github-client";
import { canOperateRuns, collaboratorRole } from "./repo-permission";
import { runPageUrl } from "./run-presentation";
import { readRunSnapshot, type RunSnapshot } from "./run-snapshot";
import type { MirrorDeps } from "./sync-run";
import { approverNeeds, reachesApproval } from "../triggers/approver-role";

/**
 * A person acts on a Run from its check run: a button (`requested_action` approve, retry,
 * cancel) or GitHub's "Re-run" (`rerequested`, an operator retry). Write access to the
 * repository is required; anyone else changes nothing, and the check run says why. The action
 * goes through the same operator as the dashboard's (lib/instance/wiring.ts: quota gate,
 * `if:` re-check); it acts once per (check run, action, identifier, sender) — a replayed delivery
 * under a new delivery id changes nothing — and only from the Run's current check run.
 */

/** The runner's operator services, as the check run actions call them. */
export interface OperatorServices {
  approveRun(runId: string, actor: string): Promise<unknown>;
  retryRun(runId: string, actor: string): Promise<unknown>;
  cancelRun(runId: string, actor: string): Promise<unknown>;
}

/** The mirror's deps (the check run is explained with the Run's view) and the operator services. */
export interface CheckRunActionDeps extends MirrorDeps {
  operator: OperatorServices;
}

/** The fields of a `check_run` webhook payload this reads. */
export interface CheckRunEventPayload {
  action: string;
  check_run: { id: number; external_id?: string | null };
  requested_action?: { identifier?: string } | null;
  repository: { full_name: string };
  sender: { login: string; id?: number };
  installation?: { id: number } | null;
}

export type OperatorAction = "approve" | "retry" | "cancel";

export type CheckRunEventOutcome =
  | { tag: "Ignored"; reason: "not_an_action" | "unknown_action" | "not_an_atelier_check_run" | "replayed" }
  | { tag: "Refused"; runId: string; action: OperatorAction; token: string; message: string }
  | { tag: "Done"; runId: string; action: OperatorAction };

const VERB: Record<OperatorAction, string> = { approve: "approve", retry: "retry", cancel: "cancel" };

/** The operator action a check_run event asks for, or null when it asks for none Atelier knows. */
export function requestedOperatorAction(payload: Pick<CheckRunEventPayload, "action" | "requested_action">): OperatorAction | null {
  if (payload.action === "rerequested") return "retry";
  if (payload.action !== "requested_action") return null;
  const id = payload.requested_action?.identifier ?? "";
  return isCheckActionId(id) ? id : null;
}

/**
 * The Run a check run mirrors: by the id its mirror stored, else by the Run id the check run
 * carries as external_id (an older check run of the Run, or one whose id was never stored).
 * Only a Run of the event's repository answers.
 */
async function runOfCheckRun(db: Db, payload: CheckRunEventPayload): Promise<{ run: RunSnapshot; current: boolean } | null> {
  const repo = payload.repository.full_name.toLowerCase();
  const mirrored = await runIdForCheckRun(db, payload.check_run.id, repo);
  const runId = mirrored ?? payload.check_run.external_id ?? null;
  if (!runId) return null;
  const run = await readRunSnapshot(db, runId);
  if (!run || run.repo !== repo) return null;
  // found by external_id only: current unless the mirror shows the Run on another check run now
  const current = mirrored !== null || (await mirroredCheckRunId(db, runId)) === null;
  return { run, current };
}

/**
 * Claims the action's key (repository, check run, action, identifier, sender): false when a delivery with
 * the same key already acted (a replay). A refused action gives its key back.
 */
async function claimAction(db: Db, payload: CheckRunEventPayload, runId: string, deliveryId: string | null): Promise<{ fresh: boolean; release(): Promise<void> }> {
  const key = JSON.stringify([payload.repository.full_name.toLowerCase(), payload.check_run.id, payload.action, payload.requested_action?.identifier ?? "", payload.sender.id ?? payload.sender.login.toLowerCase()]);
  return { fresh: await claimCheckRunAction(db, key, runId, deliveryId), release: () => releaseCheckRunAction(db, key) };
}

function perform(operator: OperatorServices, action: OperatorAction, runId: string, actor: string): Promise<unknown> {
  switch (action) {
    case "approve":
      return operator.approveRun(runId, actor);
    case "retry":
      return operator.retryRun(runId, actor);
    case "cancel":
      return operator.cancelRun(runId, actor);
  }
}

/** Puts a sentence at the top of the clicked check run's output; its state stays as it was. */
async function explainOnCheckRun(client: GitHubClient, deps: CheckRunActionDeps, run: RunSnapshot, checkRunId: number, sentence: string): Promise<void> {
  const view = checkRunView(run, deps.publicUrl);
  await callGitHub("explain a refusal on the check run", () =>
    client.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", {
      ...repoParams(run.repo),
      check_run_id: checkRunId,
      output: { title: view.output.title, summary: `**${sentence}**\n\n${view.output.summary}` },
    }),
  );
}

/**
 * Handles a `check_run` webhook: finds the Run, checks the sender may operate it, and calls the
 * runner's operator service. A refusal (no write access, or the Run is not in a state that
 * allows the action) is written on the check run; the Run's own changes reach GitHub through
 * the mirror, which the Run's change notification wakes.
 */
export async function handleCheckRunEvent(
  deps: CheckRunActionDeps,
  payload: CheckRunEventPayload,
  /** X-GitHub-Delivery, recorded with the action it did */
  deliveryId: string | null = null,
): Promise<CheckRunEventOutcome> {
  if (payload.action !== "requested_action" && payload.action !== "rerequested") return { tag: "Ignored", reason: "not_an_action" };
  const action = requestedOperatorAction(payload);
  if (!action) return { tag: "Ignored", reason: "unknown_action" };
  const found = await runOfCheckRun(deps.db, payload);
  if (!found) return { tag: "Ignored", reason: "not_an_atelier_check_run" };
  const { run } = found;
  const installationId = payload.installation?.id ?? run.installationId;
  if (installationId === null || installationId === undefined) return { tag: "Ignored", reason: "not_an_atelier_check_run" };
  const client = await callGitHub("get an installation token", () => deps.github(installationId));
  const login = payload.sender.login;
  const asked = payload.action === "rerequested" ? "re-run" : VERB[action];

  const role = await collaboratorRole(client, run.repo, login);
  if (!canOperateRuns(role)) {
    const message = `${login} asked to ${asked} but needs write permission on ${run.repo}.`;
    await explainOnCheckRun(client, deps, run, payload.check_run.id, message);
    return { tag: "Refused", runId: run.id, action, token: "permission_denied", message };
  }
  // approving takes the Loop's trigger_permission, not only write
  const needs = action === "approve" ? await approverNeeds(deps.db, run.id) : "write";
  if (!reachesApproval(role, needs)) {
    const message = `${login} asked to ${asked} but approving a Run of the Loop ${run.loop} takes ${needs} permission on ${run.repo} (its trigger_permission).`;
    await explainOnCheckRun(client, deps, run, payload.check_run.id, message);
    return { tag: "Refused", runId: run.id, action, token: "permission_denied", message };
  }
  if (!found.current) {
    const message = `${login} asked to ${asked} on an older check run of this Run; nothing was done: use the Run's current check run or ${runPageUrl(deps.publicUrl, run.id)}.`;
    await explainOnCheckRun(client, deps, run, payload.check_run.id, message);
    return { tag: "Refused", runId: run.id, action, token: "check_run_not_current", message };
  }
  if (action === "approve" && isPromptClipped(run.prompt)) {
    const message = `${login} asked to approve from GitHub, but the check run shows only part of this Run's prompt; nothing was done: read it whole and approve it on ${runPageUrl(deps.publicUrl, run.id)}.`;
    await explainOnCheckRun(client, deps, run, payload.check_run.id, message);
    return { tag: "Refused", runId: run.id, action, token: "prompt_not_shown_whole", message };
  }
  const claim = await claimAction(deps.db, payload, run.id, deliveryId);
  if (!claim.fresh) return { tag: "Ignored", reason: "replayed" };
  try {
    await perform(deps.operator, action, run.id, login);
  } catch (err) {
    await claim.release();
    if (!(err instanceof AtelierError) || err.status >= 500) throw err;
    const message = `${login} asked to ${asked}, but Atelier could not: ${err.message}`;
    await explainOnCheckRun(client, deps, run, payload.check_run.id, message);
    return { tag: "Refused", runId: run.id, action, token: err.token, message };
  }
  return { tag: "Done", runId: run.id, action };
}
