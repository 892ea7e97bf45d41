import { Queue, Worker, type ConnectionOptions } from "bullmq";
import type { ContinueDeps } from "../../lib/runner/continue-with-newest";
import { reconcile, recoverWorkspaces, sweepOrphans, type ReconcileResult, type SweepDeps } from "../../lib/runner/reconcile";
import { DEFAULT_LEASE_TTL_MS } from "../../lib/runner/lease";
import { recoverOwnHost } from "../../lib/runner/own-host-recovery";
import type { RetentionDays } from "../../lib/config/roster";
import { pruneHistory, type PruneResult } from "../../lib/retention/prune-history";
import type { RunnerGitHub } from "../../lib/runner/runner-deps";
import type { WorkerIdentity } from "../../lib/store/runs/worker-registry";
import { bullPrefix } from "../queues";

/**
 * The maintenance worker: every few minutes (a job scheduler, default 3 min) the reconcile
 * re-enqueues every Run Postgres says should move; every few seconds (another, default a third
 * of the lease TTL) the orphan sweep closes the Attempts of dead workers and those whose worker
 * stopped holding their lease, so a dead worker's Attempts are retried within about one TTL by
 * whichever live worker takes the job. The schedulers live in Redis, so each worker also
 * upserts them again on a local timer: after a FLUSHALL they come back within one period.
 */

export const MAINTENANCE_QUEUE = "maintenance";
export const RUN_RECONCILE_SCHEDULER = "reconcile-runs";
export const RUN_RECONCILE_EVERY_MS = 3 * 60_000;
export const ORPHAN_SWEEP_SCHEDULER = "sweep-orphans";
/** A third of the lease TTL: a dead worker's Attempts close within about one TTL of its death. */
export const ORPHAN_SWEEP_EVERY_MS = Math.floor(DEFAULT_LEASE_TTL_MS / 3);
/** Retention's sweep (lib/retention/prune-history.ts), hourly, when the worker was given the instance's retention. */
export const RETENTION_SCHEDULER = "prune-history";
export const RETENTION_EVERY_MS = 60 * 60_000;

export type MaintenanceDeps = ContinueDeps &
  Pick<SweepDeps, "redis" | "keyPrefix" | "leaseTtlMs" | "confirmMs" | "staleAfterMs"> & {
    /** the instance's retention: given, the queue also prunes history every hour */
    retention?: RetentionDays;
  };

export interface MaintenanceResult extends ReconcileResult {
  expired: string[];
  pruned?: PruneResult;
}

/** One maintenance pass: reconcile, then the orphan sweep. */
export async function maintain(deps: MaintenanceDeps): Promise<MaintenanceResult> {
  const reconciled = await reconcile({ ...deps, graceMs: deps.leaseTtlMs });
  const expired = await sweepOrphans(deps);
  return { ...reconciled, expired };
}

/**
 * What a registered worker does before it takes its first job: the Attempts of the dead
 * workers of its own host are closed at once (own-host-recovery.ts), the worktrees an earlier
 * process left are salvaged or removed, then one reconcile.
 */
export async function recoverAtStart(
  deps: MaintenanceDeps & { github: Pick<RunnerGitHub, "mintToken"> },
  workspaceRoot: string,
  self: Pick<WorkerIdentity, "id" | "host">,
): Promise<ReconcileResult & { recovered: string[] }> {
  const recovered = await recoverOwnHost(deps, self);
  await recoverWorkspaces(deps, workspaceRoot);
  return { ...(await reconcile({ ...deps, graceMs: deps.leaseTtlMs })), recovered };
}

export interface MaintenanceWorkerOptions {
  prefix?: string;
  everyMs?: number;
  sweepEveryMs?: number;
}

export interface MaintenanceWorker {
  worker: Worker<Record<string, never>, MaintenanceResult>;
  queue: Queue;
  /** Upserts the maintenance scheduler again (after Redis lost it). */
  reschedule(): Promise<unknown>;
  close(force?: boolean): Promise<void>;
}

export async function createMaintenanceWorker(
  connection: ConnectionOptions,
  deps: MaintenanceDeps,
  options: MaintenanceWorkerOptions = {},
): Promise<MaintenanceWorker> {
  const every = options.everyMs ?? RUN_RECONCILE_EVERY_MS;
  const sweepEvery = options.sweepEveryMs ?? ORPHAN_SWEEP_EVERY_MS;
  const prefix = bullPrefix(options.prefix);
  const queue = new Queue(MAINTENANCE_QUEUE, { connection, ...prefix });
  const opts = { removeOnComplete: true, removeOnFail: 50 };
  const { retention } = deps;
  const schedule = () =>
    Promise.all([
      queue.upsertJobScheduler(RUN_RECONCILE_SCHEDULER, { every }, { name: "reconcile", opts }),
      queue.upsertJobScheduler(ORPHAN_SWEEP_SCHEDULER, { every: sweepEvery }, { name: "sweep", opts }),
      ...(retention ? [queue.upsertJobScheduler(RETENTION_SCHEDULER, { every: RETENTION_EVERY_MS }, { name: "prune", opts })] : []),
    ]);
  await schedule();
  const guard = setInterval(() => void schedule().catch(() => undefined), every);
  guard.unref();
  const processor = async (job: { name: string }): Promise<MaintenanceResult> => {
    if (job.name === "sweep") return { moved: 0, continued: 0, expired: await sweepOrphans(deps) };
    if (job.name === "prune" && retention) return { moved: 0, continued: 0, expired: [], pruned: await pruneHistory(deps.db, retention) };
    return maintain(deps);
  };
  const worker = new Worker<Record<string, never>, MaintenanceResult>(MAINTENANCE_QUEUE, processor, {
    connection,
    concurrency: 1,
    ...prefix,
  });
  worker.on("error", (err) => deps.log?.error({ err }, "maintenance worker error"));
  return {
    worker,
    queue,
    reschedule: schedule,
    async close(force) {
      clearInterval(guard);
      await worker.close(force);
      await queue.close();
    },
  };
}
