import { DelayedError, Worker, type ConnectionOptions, type Job } from "bullmq";
import type { MoveOutcome } from "../../lib/runner/move-run";
import type { RunnerHost } from "../../lib/runner/runner-host";
import { ENGINE_FAILURES_BEFORE_PARKING } from "../../lib/store/runs/engine-failures";
import { bullPrefix, type MoveRunJob, QUEUE_NAMES } from "../queues";

/**
 * The attempts worker: a thin BullMQ Worker whose processor is the runner's moveRun. Its
 * concurrency is the worker's slots (max_concurrent_attempts). A Run that must move again (an
 * automatic retry, or this worker draining) goes back to the queue as the same job, delayed,
 * so it takes a new slot in order of Event receipt.
 *
 * A job's lock lasts 10 s (renewed every 5 s) and abandoned jobs are looked for every 5 s, so
 * a dead worker's jobs are offered again within about 15 s (the Run itself waits for its
 * lease and the orphan sweep: the fence). Each abandoned job counts one engine failure on its
 * Run (engine-failure.ts), which parks a Run whose job keeps killing its worker; BullMQ's own
 * stalled limit is set past that count.
 */

/** How long a job's lock lasts without renewal (BullMQ renews it every half). */
export const ATTEMPT_JOB_LOCK_MS = 10_000;
/** How often a worker looks for jobs whose lock expired (abandoned by a dead worker). */
export const ATTEMPT_STALLED_CHECK_MS = 5_000;

export interface AttemptWorkerOptions {
  /** BullMQ key prefix (default the instance's); tests use one per file. */
  prefix?: string;
  /** How long a job's lock lasts without renewal: a dead worker's job is offered again after it. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
}

export function createAttemptWorker(
  connection: ConnectionOptions,
  host: RunnerHost,
  options: AttemptWorkerOptions = {},
): Worker<MoveRunJob, MoveOutcome> {
  const { workQueue } = host.context.deps;
  const processor = async (job: Job<MoveRunJob, MoveOutcome>, token?: string): Promise<MoveOutcome> => {
    const { runId } = job.data;
    await countAbandons(job, host);
    const outcome = await host.moveRun(runId);
    if (outcome.tag !== "Again") return outcome;
    try {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
    } catch {
      // the job's keys are gone (Redis was flushed under it): enqueue the Run afresh
      await workQueue.moveRun(job.data.runId, { receivedAt: new Date(job.data.receivedAt), delayMs: outcome.delayMs });
      return outcome;
    }
    throw new DelayedError();
  };
  const worker = new Worker<MoveRunJob, MoveOutcome>(QUEUE_NAMES.attempts, processor, {
    connection,
    concurrency: host.context.slots.size,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
    ...bullPrefix(options.prefix),
    lockDuration: options.lockDurationMs ?? ATTEMPT_JOB_LOCK_MS,
    stalledInterval: options.stalledIntervalMs ?? ATTEMPT_STALLED_CHECK_MS,
    // the Run's engine-failure count parks it first; a job failed by BullMQ would only wait for a reconcile
    maxStalledCount: ENGINE_FAILURES_BEFORE_PARKING + 1,
  });
  worker.on("error", (err) => host.context.log.error({ err }, "attempts worker error"));
  worker.on("failed", (job, err) => host.context.log.error({ err, run_id: job?.data.runId }, "moving a Run failed"));
  return worker;
}

/**
 * Counts, before the move, each time this job was found abandoned (BullMQ's stalled counter)
 * that no earlier move counted, and keeps the count in the job. Counted here and not on the
 * "stalled" event: the event's write could wait behind this very move's lock on the Run, and
 * die with it when the move kills its worker again, so a Run that kills every worker would
 * never be parked.
 */
async function countAbandons(job: Job<MoveRunJob, MoveOutcome>, host: RunnerHost): Promise<number> {
  const counted = job.data.abandonsCounted ?? 0;
  if (job.stalledCounter <= counted) return counted;
  for (let n = counted; n < job.stalledCounter; n++) await host.jobAbandoned(job.data.runId);
  await job.updateData({ ...job.data, abandonsCounted: job.stalledCounter });
  return job.stalledCounter;
}

export interface ShutdownTargets {
  host: RunnerHost;
  /** Every BullMQ worker of the process; the attempts worker first. */
  workers: { close(force?: boolean): Promise<void> }[];
  /** Closes what is left (queues, connections, the database) before exit. */
  cleanup?: () => Promise<void>;
  exit?: (code: number) => void;
  log?: { info(obj: object, msg?: string): void };
  /** How long the drain waits for the running Attempts before it hands them over (default: the host's). */
  drainTimeoutMs?: number;
}

/**
 * Drain on the first SIGTERM/SIGINT: the workers stop taking jobs, admission closes, and the
 * process waits for its running Attempts to record their outcome (at most the longest
 * max_attempt_minutes of the roster), hands over those still running (their sessions kept, to
 * be resumed on another worker: ADR 0083), then exits 0. A second signal stops at once: the agents
 * are stopped, nothing is written, the leases expire and the next start (or another worker's
 * sweep) recovers those Attempts as InfraFailures; exit 1.
 */
export function installShutdownSignals(targets: ShutdownTargets): () => void {
  const exit = targets.exit ?? ((code: number) => process.exit(code));
  const log = targets.log ?? { info: () => undefined };
  let signals = 0;
  const finish = async (code: number, force: boolean) => {
    await Promise.all(targets.workers.map((w) => w.close(force).catch(() => undefined)));
    await targets.host.close().catch(() => undefined);
    await targets.cleanup?.().catch(() => undefined);
    exit(code);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      log.info({ signal, running: targets.host.running }, "draining: no new Attempt; waiting for the running ones (signal again to stop at once)");
      for (const w of targets.workers) void w.close().catch(() => undefined);
      void targets.host.drain(targets.drainTimeoutMs !== undefined ? { timeoutMs: targets.drainTimeoutMs } : {}).then(async ({ drained, handedOver, left }) => {
        if (signals > 1) return;
        if (handedOver) log.info({ handedOver, left }, "handed over the Attempts that outlived the drain: their sessions kept, to be resumed elsewhere");
        if (left) await targets.host.stop();
        await finish(left ? 1 : 0, !drained);
      });
    } else if (signals === 2) {
      log.info({ signal, running: targets.host.running }, "stopping at once; the running Attempts will be recovered by the next start");
      void targets.host.stop({ waitMs: 1_000 }).then(() => finish(1, true));
    }
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return () => {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
}
