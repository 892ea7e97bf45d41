import { allows, type RunStateName } from "../engine/run-state";
import { isParkedByEngineFailures } from "../store/runs/engine-failures";

/**
 * Small named questions about a Run for the dashboard: what it waits for, and which operator
 * actions its state allows (from the engine's FROM lists, never a copied list of states).
 */

export type RunAction = "approve" | "retry" | "edit-and-retry" | "cancel" | "resolve-failure" | "intervene" | "push" | "discard";

export interface RunFacts {
  state: RunStateName;
  waitingReason: string | null;
  pullRequestNumber: number | null;
  /** The newest Attempt, if any. */
  latestAttempt: { id: string; state: string; number: number } | null;
  /** The newest failed Attempt's id, if any. */
  latestFailedAttemptId: string | null;
  resolvedFailureAttemptId: string | null;
  /** Whether the worker registry knows a live worker (absent: assumed). */
  workerRunning?: boolean;
}

/** The Run's latest failure is not handled yet (no resolve after it). */
export function hasUnresolvedFailure(run: Pick<RunFacts, "state" | "latestFailedAttemptId" | "resolvedFailureAttemptId">): boolean {
  return run.state === "Failed" && run.resolvedFailureAttemptId !== (run.latestFailedAttemptId ?? null);
}

/** A short phrase: what the Run is waiting for, or null when nothing. */
export function waitsFor(run: Pick<RunFacts, "state" | "waitingReason" | "pullRequestNumber"> & Partial<RunFacts>): string | null {
  switch (run.state) {
    case "Pending":
      return "admission";
    case "Waiting":
      if (isParkedByEngineFailures(run.state, run.waitingReason)) return "an operator: Atelier failed moving it; retry or cancel";
      return run.waitingReason === "approval" || !run.waitingReason ? "an operator's approval" : run.waitingReason;
    case "Queued":
      return run.workerRunning === false ? "a worker, and no worker is running" : "a free worker slot";
    case "Running":
      return "the agent to finish";
    case "Reviewing":
      return "a writer to review the agent's commits and push or discard them";
    case "Failed":
      return hasUnresolvedFailure({ state: run.state, latestFailedAttemptId: run.latestFailedAttemptId ?? null, resolvedFailureAttemptId: run.resolvedFailureAttemptId ?? null })
        ? "an operator: retry or resolve the failure"
        : null;
    case "Succeeded":
      return run.pullRequestNumber ? `review of pull request #${run.pullRequestNumber}` : null;
    default:
      return null;
  }
}

/** The operator actions this Run's state allows; `canIntervene` says whether its Agent takes input. */
export function availableActions(run: RunFacts, canIntervene: boolean): RunAction[] {
  const out: RunAction[] = [];
  const parked = isParkedByEngineFailures(run.state, run.waitingReason);
  if (allows("approve", run.state) && !parked) out.push("approve");
  if (allows("retry", run.state) || (parked && allows("retryParked", run.state))) out.push("retry");
  if (allows("editAndRetry", run.state)) out.push("edit-and-retry");
  if (allows("resolveFailure", run.state) && hasUnresolvedFailure(run)) out.push("resolve-failure");
  if (canIntervene && run.state === "Running" && run.latestAttempt?.state === "Running") out.push("intervene");
  if (allows("pushReviewed", run.state)) out.push("push");
  if (allows("discardReviewed", run.state)) out.push("discard");
  if (allows("cancel", run.state)) out.push("cancel");
  return out;
}
