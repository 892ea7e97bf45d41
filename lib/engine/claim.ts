import { isRunning, isUnstarted, type RunStateName } from "./run-state";

/** The open Run of the same Loop and Item, if any. */
export interface BlockingRun {
  id: string;
  state: RunStateName;
}

export type ClaimDecision =
  | { tag: "OpenRun" }
  | { tag: "QueueEvent"; behind: string }
  | { tag: "SupersedeRun"; runId: string };

/**
 * Places an unclaimed Event: behind running work (a started Attempt always finishes), in place
 * of unstarted work, or in a new Run. The ledger has already resolved duplicates and ignored
 * Events before this is asked.
 */
export function decideClaim(blocking: BlockingRun | null): ClaimDecision {
  if (!blocking) return { tag: "OpenRun" };
  if (isRunning(blocking.state)) return { tag: "QueueEvent", behind: blocking.id };
  if (isUnstarted(blocking.state)) return { tag: "SupersedeRun", runId: blocking.id };
  return { tag: "OpenRun" };
}

/** The default cycle budget: Runs one Loop may open on one Item between operator resets. */
export const DEFAULT_MAX_CYCLES = 3;

/** Whether the Item's budget admits one more Run of this Loop. */
export function budgetAdmits(reserved: number, maxCycles: number, askPending: boolean): boolean {
  return !askPending && reserved < maxCycles;
}
