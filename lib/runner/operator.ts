import type { Redis } from "ioredis";
import { agentNotAllowedMessage, type AgentSpec } from "../config/roster";
import { mayUseAgent } from "../auth/roster-allow";
import { offersModel } from "../executor/adapters/argv";
import { BadInputError, ConflictError, ForbiddenError, NotFoundError } from "../errors";
import { approve } from "../store/runs/approvals";
import { audit } from "../store/people/audit-log";
import * as store from "../store/runs/operator-actions";
import type { RunRow } from "../store/runs/run-rows";
import { transaction } from "../store/kernel/transaction";
import { continueWithNewest, type ContinueDeps, type ContinueResult } from "./continue-with-newest";
import { publishCancel, publishIntervention } from "./control-channel";
import { DEFAULT_KEY_PREFIX, redisNames } from "./redis-names";
import { rosterAgent, type Roster } from "./runner-deps";
import { readRunSnapshot } from "../store/runs/start-basis";

/**
 * The operator's actions on Runs, as the dashboard's API and the check-run actions call them:
 * the store's guarded transition, then what it sets moving — a job after approve and retry,
 * the running agent stopped after a cancel (wherever it runs), the intervention delivered to
 * the live agent. A state that forbids the action is a ConflictError (409).
 */

export interface OperatorDeps extends ContinueDeps {
  /** A command connection, for the control channel. */
  redis: Redis;
  /** The runner's key prefix (default `atelier:`). */
  keyPrefix?: string;
  /** When given, an edit's agent and an intervention are checked against it. */
  roster?: Roster;
  /** The host of the GitHub API the App talks to (the roster's `allow:` is resolved there); without it, no agent with an `allow:` may be picked. */
  apiHost?: () => Promise<string>;
}

const names = (deps: OperatorDeps) => redisNames(deps.keyPrefix ?? DEFAULT_KEY_PREFIX);

/** Waiting → Queued, and the Run's job is enqueued. */
export async function approveRun(deps: OperatorDeps, runId: string, actor: string): Promise<RunRow> {
  const run = await approve(deps.db, runId, actor);
  await deps.workQueue.moveRun(runId, { receivedAt: run.received_at });
  return run;
}

/** Failed → Running (Attempt n+1, from the pushed branch), and the Run's job is enqueued. */
export async function retryRun(deps: OperatorDeps, runId: string, actor: string): Promise<RunRow> {
  const run = await store.retryRun(deps.db, runId, actor);
  await deps.workQueue.moveRun(runId, { receivedAt: run.received_at });
  return run;
}

/**
 * Replaces the task text, the Agent and/or the model of a Failed Run, then retries it. The model
 * must be one the (new) agent offers in the roster; another agent keeps the Run's model only
 * when it offers it too — else the amendment must name one (never a silent reset to a default).
 */
export async function editAndRetryRun(deps: OperatorDeps, runId: string, actor: string, amendment: store.RunAmendment): Promise<RunRow> {
  if (amendment.agent !== undefined && deps.roster && !rosterAgent(deps.roster, amendment.agent)) {
    throw new BadInputError("unknown_agent", `The roster has no agent "${amendment.agent}"; pick one of: ${Object.keys(deps.roster.agents).join(", ")}.`);
  }
  if ((amendment.agent !== undefined || amendment.model !== undefined) && deps.roster) {
    const snap = await readRunSnapshot(deps.db, runId);
    if (!snap) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
    const name = amendment.agent ?? snap.run.agent;
    const agent = rosterAgent(deps.roster, name);
    if (amendment.agent !== undefined && !(await mayPick(deps, agent!, snap.run.repo))) {
      throw new ForbiddenError("agent_not_allowed", agentNotAllowedMessage(amendment.agent, snap.run.repo), { agent: amendment.agent, repo: snap.run.repo });
    }
    const model = amendment.model === undefined ? snap.run.model : amendment.model;
    if (agent && model !== null && !offersModel(agent, model)) throw modelNotOffered(agent, model);
  }
  if (amendment.prompt !== undefined && amendment.prompt.trim() === "") {
    throw new BadInputError("prompt_empty", "The new task text is empty; write what the agent should do.");
  }
  const run = await store.editAndRetryRun(deps.db, runId, actor, amendment);
  await deps.workQueue.moveRun(runId, { receivedAt: run.received_at });
  return run;
}

/** Whether an edit may give the Run's repository this agent: by the ids its `allow:` names. */
async function mayPick(deps: OperatorDeps, agent: AgentSpec, repo: string): Promise<boolean> {
  if (!agent.allow) return true;
  return deps.apiHost !== undefined && mayUseAgent(deps.db, await deps.apiHost(), agent, repo);
}

export interface CancelResult {
  run: RunRow;
  canceledAttempt: string | null;
  /** How many workers heard the stop (0 when no Attempt was running). */
  notified: number;
  /** What happened to the Events queued behind the Run, when no agent had to be stopped first. */
  continued: ContinueResult | null;
}

/**
 * Any open state becomes Canceled. A running Attempt closes as Canceled and its agent (with its
 * whole process group) is stopped by the worker that runs it, which then gives the Events
 * queued behind the Run their turn; a Run with no running Attempt gives them their turn here.
 */
export async function cancelRun(deps: OperatorDeps, runId: string, actor: string): Promise<CancelResult> {
  const { run, canceledAttempt } = await store.cancelRun(deps.db, runId, actor);
  if (canceledAttempt) {
    const notified = await publishCancel(deps.redis, names(deps), { runId, attemptId: canceledAttempt });
    return { run, canceledAttempt, notified, continued: null };
  }
  const continued = await continueWithNewest(deps, { loop: run.loop, itemKey: run.item_key });
  return { run, canceledAttempt, notified: 0, continued };
}

/** Marks the latest failed Attempt as handled; the state does not change. */
export function resolveFailure(deps: Pick<OperatorDeps, "db">, runId: string, actor: string): Promise<RunRow> {
  return store.resolveFailure(deps.db, runId, actor);
}

/**
 * Sends text to the running agent's stdin. The Run must be Running with `attemptId` as its
 * latest Attempt and still open; the Agent must allow interventions (roster `intervene`).
 */
export async function intervene(
  deps: OperatorDeps,
  runId: string,
  actor: string,
  input: { attemptId: string; text: string },
): Promise<{ notified: number }> {
  const text = input.text.replace(/\r?\n$/, "");
  if (text.trim() === "") throw new BadInputError("intervention_empty", "Write something for the agent.");
  if (text.length > 8_000) throw new BadInputError("intervention_too_long", "An intervention is at most 8000 characters.");
  const snap = await readRunSnapshot(deps.db, runId);
  if (!snap) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  if (snap.run.state !== "Running" || snap.latest?.id !== input.attemptId || snap.latest.state !== "Running") {
    throw new ConflictError("attempt_not_live", `Attempt ${input.attemptId} is not the live Attempt of this Run; only a running agent can be spoken to.`, {
      state: snap.run.state,
      latestAttempt: snap.latest?.id ?? null,
    });
  }
  const agent = deps.roster ? rosterAgent(deps.roster, snap.run.agent) : null;
  if (deps.roster && !agent?.intervene) {
    throw new BadInputError("intervene_not_allowed", `Agent ${snap.run.agent} does not take interventions (intervene is off in the roster).`);
  }
  const auditId = await transaction(deps.db, (sql) =>
    audit(sql, { actor, action: "intervene", repo: snap.run.repo, runId, detail: { attemptId: input.attemptId, text } }),
  );
  const notified = await publishIntervention(deps.redis, names(deps), { runId, auditId });
  if (notified === 0) {
    throw new ConflictError("agent_not_reachable", "No worker is listening: the agent cannot be reached. Is the worker running?");
  }
  return { notified };
}

/** The amendment's model (or the Run's, kept for another agent) is not one the agent offers. */
function modelNotOffered(agent: AgentSpec, model: string): BadInputError {
  const offered = [...new Set([agent.model, ...agent.models].filter((m): m is string => !!m))];
  const choice = offered.length ? `pick one of ${offered.join(", ")}` : "it lists no models";
  return new BadInputError("model_not_offered", `Agent ${agent.name} does not offer the model ${model}: ${choice}, or null for its default.`, {
    agent: agent.name,
    model,
    models: offered,
  });
}
