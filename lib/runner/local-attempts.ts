import type { AgentControl } from "../executor/run-agent";

/**
 * The Attempts this worker process runs right now, by Run: what a cancel or an intervention
 * heard on the control channel acts on, and what drain waits for.
 */
export interface LocalAttempt {
  readonly runId: string;
  attemptId: string | null;
  /** An operator canceled the Run. */
  readonly canceled: AbortController;
  /**
   * This worker stops the agent: at once (hard stop, nothing is written), or to hand the
   * Attempt over (reason HAND_OVER: the session is kept and the Attempt closed as interrupted).
   */
  readonly stopped: AbortController;
  agent: AgentControl | null;
  /** A line for the Attempt's transcript (set once the transcript exists). */
  note: (text: string) => void;
}

/** The reason of `stopped` when a draining worker hands its Attempt over (ADR 0083). */
export const HAND_OVER = "hand_over";

export class LocalAttempts {
  private readonly byRun = new Map<string, LocalAttempt>();
  private emptyWaiters: (() => void)[] = [];

  get size(): number {
    return this.byRun.size;
  }

  add(runId: string): LocalAttempt {
    const local: LocalAttempt = {
      runId,
      attemptId: null,
      canceled: new AbortController(),
      stopped: new AbortController(),
      agent: null,
      note: () => undefined,
    };
    this.byRun.set(runId, local);
    return local;
  }

  get(runId: string): LocalAttempt | undefined {
    return this.byRun.get(runId);
  }

  remove(local: LocalAttempt): void {
    if (this.byRun.get(local.runId) === local) this.byRun.delete(local.runId);
    if (this.byRun.size === 0) for (const resolve of this.emptyWaiters.splice(0)) resolve();
  }

  all(): LocalAttempt[] {
    return [...this.byRun.values()];
  }

  whenEmpty(): Promise<void> {
    if (this.byRun.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.push(resolve));
  }
}
