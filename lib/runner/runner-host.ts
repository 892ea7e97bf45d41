import { hostname } from "node:os";
import { isAttemptCanceled, readAuditedIntervention } from "../store/people/audit-log";
import { subscribeControl, type ControlSubscription } from "./control-channel";
import { DEFAULT_LEASE_TTL_MS } from "./lease";
import { HAND_OVER, LocalAttempts } from "./local-attempts";
import { countingEngineFailures, countWorkerDeath } from "./engine-failure";
import { moveRun, type MoveOutcome } from "./move-run";
import { redisNames } from "./redis-names";
import type { RunnerContext } from "./runner-context";
import { SILENT_LOG, type RunnerConfig, type RunnerDeps } from "./runner-deps";
import { SlotPool } from "./slots";

/**
 * One worker process's runner: its Attempt slots, the Attempts it runs, the control channel
 * that reaches them (cancel, intervene), and drain. The BullMQ worker (jobs/processors/
 * attempt.ts) calls `moveRun` for each job; the process entry calls `drain` on the first
 * SIGTERM/SIGINT and `stop` on the second (see installShutdownSignals there).
 */

export interface DrainResult {
  /** Every admitted Attempt recorded its outcome in time. */
  drained: boolean;
  /** Attempts that outlived the wait and were handed over (their sessions kept, closed as interrupted). */
  handedOver: number;
  /** Attempts still running after the hand-over's own wait. */
  left: number;
}

export interface RunnerHost {
  readonly context: RunnerContext;
  /** Subscribes to the control channel. */
  start(): Promise<void>;
  moveRun(runId: string): Promise<MoveOutcome>;
  /** A worker (this one or another) died while it held the Run's job: counted as an engine failure. */
  jobAbandoned(runId: string): Promise<void>;
  /** Attempts running in this process. */
  readonly running: number;
  /**
   * Closes admission (a job that reaches this worker now goes back to the queue) and waits for
   * the admitted Attempts to record their outcome: at most `timeoutMs`, by default the longest
   * max_attempt_minutes of the roster (each agent is stopped at its own limit anyway). Those
   * still running then are handed over (ADR 0083): each agent stopped, its session kept, its
   * Attempt closed as interrupted and its Run moved on, for another worker to resume it.
   */
  drain(opts?: { timeoutMs?: number; handOverMs?: number }): Promise<DrainResult>;
  /**
   * Stops at once: admission closes, every running agent is stopped and no outcome is written;
   * the leases are left to expire, so the orphan sweep (here or on another worker) closes those
   * Attempts as InfraFailures and the Runs are retried.
   */
  stop(opts?: { waitMs?: number }): Promise<void>;
  /** Unsubscribes (after drain or stop). */
  close(): Promise<void>;
}

export type RunnerHostConfig = Partial<RunnerConfig> & Pick<RunnerConfig, "workspaceRoot" | "roster">;

/** How long a hand-over waits for its agents to stop, their sessions to be kept and their Attempts closed. */
const HAND_OVER_WAIT_MS = 30_000;

export const defaultWorkerId = (): string => `${hostname()}:${process.pid}`;

/** What a drain waits when an agent's max_attempt_minutes is unlimited and drain_minutes is not set. */
export const UNLIMITED_DRAIN_MINUTES = 60;

/**
 * What drain waits at most, in ms: the longest max_attempt_minutes of the roster, bounded by
 * the instance's drain_minutes — or by UNLIMITED_DRAIN_MINUTES when an agent's is unlimited.
 */
export function longestAttemptMs(roster: RunnerConfig["roster"]): number {
  const limits = Object.values(roster.agents).map((a) => a.maxAttemptMinutes);
  const unlimited = limits.includes(null);
  const longest = unlimited ? Number.POSITIVE_INFINITY : Math.max(1, ...limits.filter((m): m is number => m !== null));
  const bound = roster.drainMinutes ?? (unlimited ? UNLIMITED_DRAIN_MINUTES : Number.POSITIVE_INFINITY);
  return Math.min(longest, bound) * 60_000;
}

export function createRunnerHost(deps: RunnerDeps, config: RunnerHostConfig): RunnerHost {
  const full: RunnerConfig = {
    workerId: defaultWorkerId(),
    keyPrefix: "atelier:",
    leaseTtlMs: DEFAULT_LEASE_TTL_MS,
    ...config,
  };
  const context: RunnerContext = {
    deps,
    config: full,
    names: redisNames(full.keyPrefix),
    slots: new SlotPool(full.roster.maxConcurrentAttempts),
    local: new LocalAttempts(),
    log: deps.log ?? SILENT_LOG,
  };
  let subscription: ControlSubscription | null = null;

  const settle = async (waitMs: number): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const idle = Promise.all([context.local.whenEmpty(), context.slots.whenIdle()]).then(() => true);
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    const done = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    return done;
  };

  return {
    context,
    get running() {
      return context.local.size;
    },
    async start() {
      subscription ??= await subscribeControl(deps.redis, context.names, {
        cancel(msg) {
          const local = context.local.get(msg.runId);
          const attemptId = local?.attemptId;
          if (!local || !attemptId) return;
          void isAttemptCanceled(deps.db, attemptId)
            .then((canceled) => {
              if (!canceled) {
                context.log.warn({ run_id: msg.runId, attempt_id: attemptId }, "a cancel message for an Attempt its row does not say Canceled: ignored");
                return;
              }
              context.log.info({ run_id: msg.runId, attempt_id: attemptId }, "canceled by an operator; stopping the agent");
              local.canceled.abort();
            })
            .catch(() => undefined); // the row watch notices a real cancel anyway
        },
        intervene(msg) {
          const local = context.local.get(msg.runId);
          if (!local?.attemptId) return;
          void readAuditedIntervention(deps.db, msg.auditId)
            .then((found) => {
              if (!found || found.runId !== local.runId || found.attemptId !== local.attemptId) {
                context.log.warn({ run_id: msg.runId, auditId: msg.auditId }, "an intervention message with no audited intervention behind it: ignored");
                return;
              }
              if (!local.agent) {
                local.note(`intervention from ${found.actor} not delivered: the agent has not started yet`);
                return;
              }
              try {
                local.agent.intervene(found.text);
              } catch (err) {
                local.note(`intervention from ${found.actor} not delivered: ${err instanceof Error ? err.message : String(err)}`);
              }
            })
            .catch(() => undefined);
        },
      });
    },
    moveRun: (runId) => countingEngineFailures(context, runId, () => moveRun(context, runId)),
    jobAbandoned: (runId) => countWorkerDeath(context, runId),
    async drain(opts = {}) {
      context.slots.close();
      const drained = await settle(opts.timeoutMs ?? longestAttemptMs(full.roster) + 60_000);
      if (drained) return { drained, handedOver: 0, left: 0 };
      const handedOver = context.local.size;
      for (const local of context.local.all()) local.stopped.abort(HAND_OVER);
      await settle(opts.handOverMs ?? HAND_OVER_WAIT_MS);
      return { drained, handedOver, left: context.local.size };
    },
    async stop(opts = {}) {
      context.slots.close();
      for (const local of context.local.all()) local.stopped.abort();
      await settle(opts.waitMs ?? 2_000);
    },
    async close() {
      await subscription?.close();
      subscription = null;
    },
  };
}
