import type { SnapshotStore } from "../executor/environment/snapshot-store";
import type { Db } from "../store/kernel/db";
import type { BoardMoveInput } from "../triggers/board-move";
import type { ConfigCheck } from "../triggers/check-config";
import type { DispatchInput, DispatchOutcome } from "../triggers/dispatch";

/**
 * What the dashboard asks of the rest of Atelier when a person acts. The runner's operator
 * services (lib/runner/operator.ts: also enqueue work and stop running agents) and the
 * triggers' Board and Loop services (lib/triggers: label writes on GitHub, Hints, pauses)
 * implement it; app/_server/services.ts plugs them in. `storeOperatorServices` is the
 * fallback made of the store's transitions alone.
 *
 * Every method throws the store's typed errors: ConflictError (409) for an illegal state,
 * NotFoundError (404), BadInputError (400).
 */
export interface OperatorServices {
  approveRun(runId: string, actor: string): Promise<unknown>;
  retryRun(runId: string, actor: string): Promise<unknown>;
  editAndRetryRun(runId: string, actor: string, amendment: { prompt?: string; agent?: string }): Promise<unknown>;
  cancelRun(runId: string, actor: string): Promise<unknown>;
  resolveFailure(runId: string, actor: string): Promise<unknown>;
  /** A writer pushes a Reviewing Run's held commits: the branch and the pull request are made, CI may run (ADR 0058). */
  pushReviewed(runId: string, actor: string): Promise<unknown>;
  /** A writer discards a Reviewing Run's held commits: nothing of them is left on GitHub. */
  discardReviewed(runId: string, actor: string): Promise<unknown>;
  /** Sends a person's message to the live agent session of the Run's open Attempt. */
  intervene(runId: string, actor: string, input: { attemptId: string; text: string }): Promise<unknown>;
  resetCycleBudget(itemKey: string, actor: string): Promise<unknown>;
}

export interface LoopServices {
  setLoopPaused(repo: string, loop: string, paused: boolean, actor: string): Promise<unknown>;
  /** "Run Loop X on #N now" (lib/triggers/dispatch.ts): through the admission gate, audited. */
  dispatchLoop(input: DispatchInput): Promise<DispatchOutcome>;
  /** "Check config now" (lib/triggers/check-config.ts): `.github/atelier.yml` read from GitHub at once, audited. */
  checkConfig(repo: string, actor: string): Promise<ConfigCheck>;
}

/** A Board move: the lane labels to add and remove on GitHub, then a Hint to re-read the Item. */
export type BoardMove = BoardMoveInput;

export interface BoardServices {
  moveCard(move: BoardMove): Promise<unknown>;
}

export type DashboardServices = OperatorServices & LoopServices & BoardServices;

/** Everything an action needs: the database and the services that act. */
export interface DashboardContext {
  db: Db;
  services: DashboardServices;
  /** Where environment snapshots are kept; absent: the instance's (snapshotStoreFromEnv). */
  snapshots?: SnapshotStore;
}
