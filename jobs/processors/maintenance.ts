import { Queue, Worker, type ConnectionOptions } from "bullmq";
import type { ContinueDeps } from "../../lib/runner/continue-with-newest";
import { reconcile, recoverWorkspaces, sweepOrphans, type ReconcileResult, type SweepDeps } from "../../lib/runner/reconcile";
import type { RunnerGitHub } from "../../lib/runner/runner-deps";
import { bullPrefix } from "../queues";

/**
 * The maintenance worker: every few minutes (a job scheduler, default 3 min) the reconcile
 * re-enqueues every Run Postgres says should move and the orphan sweep closes Attempts whose
 * worker stopped holding their lease. The scheduler itself lives in Redis, so each worker also
 * upserts it again on a local timer: after a FLUSHALL it comes back within one period.
 */

export const MAINTENANCE_QUEUE = "maintenance";
export const RUN_RECONCILE_SCHEDULER = "reconcile-runs";
export const RUN_RECONCILE_EVERY_MS = 3 * 60_000;

export type MaintenanceDeps = ContinueDeps & Pick<SweepDeps, "redis" | "keyPrefix" | "leaseTtlMs" | "confirmMs">;

export interface MaintenanceResult extends ReconcileResult {
  expired: string[];
}

/** One maintenance pass: reconcile, then the orphan sweep. */
export async function maintain(deps: MaintenanceDeps): Promise<MaintenanceResult> {
  const reconciled = await reconcile({ ...deps, graceMs: deps.leaseTtlMs });
  const expired = await sweepOrphans(deps);
  return { ...reconciled, expired };
}

/**
 * What a worker does before it takes its first job: the worktrees an earlier process left are
 * salvaged or removed, then one reconcile.
 */
export async function recoverAtStart(
  deps: MaintenanceDeps & { github: Pick<RunnerGitHub, "mintToken"> },
  workspaceRoot: string,
): Promise<ReconcileResult> {
  await recoverWorkspaces(deps, workspaceRoot);
  return reconcile({ ...deps, graceMs: deps.leaseTtlMs });
}

export interface MaintenanceWorkerOptions {
  prefix?: string;
  everyMs?: number;
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
  const prefix = bullPrefix(options.prefix);
  const queue = new Queue(MAINTENANCE_QUEUE, { connection, ...prefix });
  const schedule = () =>
    queue.upsertJobScheduler(RUN_RECONCILE_SCHEDULER, { every }, { name: "reconcile", opts: { removeOnComplete: true, removeOnFail: 50 } });
  await schedule();
  const guard = setInterval(() => void schedule().catch(() => undefined), every);
  guard.unref();
  const worker = new Worker<Record<string, never>, MaintenanceResult>(MAINTENANCE_QUEUE, () => maintain(deps), {
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
