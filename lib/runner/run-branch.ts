import { runBranch } from "../executor/branch-name";
import type { StartedRun } from "../store/runs/attempts";
import type { RunRow } from "../store/runs/run-rows";

/**
 * The branch a Run's work goes to: per Item, or per Tick for a schedule Loop (the Tick's
 * scheduledAt is the last part of its dedup key, which is the Run's Event id).
 */
function branchOfRun(run: Pick<RunRow, "loop" | "number" | "event_id" | "received_at">): string {
  if (run.number !== null) return runBranch(run.loop, { number: run.number });
  return runBranch(run.loop, { scheduledAt: tickScheduledAt(run.event_id) ?? run.received_at });
}

function tickScheduledAt(eventId: string): Date | null {
  try {
    const key: unknown = JSON.parse(eventId);
    const last = Array.isArray(key) ? key[key.length - 1] : null;
    const at = typeof last === "string" ? new Date(last) : null;
    return at && !Number.isNaN(at.getTime()) ? at : null;
  } catch {
    return null;
  }
}

/**
 * The branch an Attempt works on: the one the Run already pushed, else the App's pull request
 * branch its Event continues (a `continue: same-branch` Loop, ADR 0019), else its own.
 */
export function workBranchOfRun(run: Pick<StartedRun, "loop" | "number" | "event_id" | "received_at" | "branch" | "submitted_branch">): string {
  return run.branch ?? run.submitted_branch ?? branchOfRun(run);
}
