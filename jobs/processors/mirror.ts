import { Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job, type JobsOptions } from "bullmq";
import { isRetryableMirrorError, MIRROR_TRIES, mirrorRetryDelayMs } from "../../lib/mirror/mirror-retry";
import { runsBehindTheirMirror } from "../../lib/store/github/run-mirrors";
import { syncRunMirror, type MirrorDeps, type SyncOutcome } from "../../lib/mirror/sync-run";
import { notificationsOf, type Subscription } from "../../lib/store/kernel/notifications";
import { RUN_CHANGED_CHANNEL } from "../../lib/store/runs/run-changed";
import { SILENT_LOG, type WorkerLog } from "./worker-log";
import { bullPrefix } from "../queues";

/**
 * The "mirror" queue: GitHub shows each Run (check run, Item comment) through it, never in the
 * engine's path. A Postgres LISTEN on `atelier_run_changed` enqueues one job per changed Run,
 * deduplicated by `mirror:<runId>` (BullMQ refuses a custom job id with one colon, so the key
 * is a deduplication id): a burst of changes is one sync, and a change that lands while its
 * Run is being synced is kept as one more job (keepLastIfActive), never lost. GitHub errors
 * (5xx, rate limits) are retried with backoff, honouring Retry-After. A sweep every minute
 * catches the notifications missed while no worker listened.
 */

export const MIRROR_QUEUE = "mirror";
const SYNC_JOB = "sync";
const SWEEP_JOB = "sweep";
export const MIRROR_SWEEP_SCHEDULER = "mirror-sweep";
export const MIRROR_SWEEP_EVERY_MS = 60_000;

export interface MirrorJob {
  runId?: string;
}

export interface MirrorWorkerOptions {
  /** BullMQ key prefix (default the instance's); tests use one per file. */
  prefix?: string;
  /** Syncs at once (default 4); each holds one Postgres connection while it runs. */
  concurrency?: number;
  /** The sweep's period; 0 leaves the job scheduler alone (tests call sweep()). */
  sweepEveryMs?: number;
  /** Listen to Postgres notifications, after a first sweep (default true). */
  listen?: boolean;
  log?: WorkerLog;
}

export interface MirrorWorker {
  readonly queue: Queue<MirrorJob>;
  readonly worker: Worker<MirrorJob>;
  /** Asks for one sync of the Run (coalesced with any already waiting). */
  enqueue(runId: string): Promise<void>;
  /** Enqueues every Run whose mirror fell behind; returns how many. */
  sweep(): Promise<number>;
  /** Upserts the sweep's scheduler again (after Redis lost it). */
  reschedule(): Promise<void>;
  close(): Promise<void>;
}

export function mirrorJobOptions(runId: string): JobsOptions {
  return {
    deduplication: { id: `mirror:${runId}`, keepLastIfActive: true },
    attempts: MIRROR_TRIES,
    backoff: { type: "github" },
    removeOnComplete: true,
    removeOnFail: { count: 1000 },
  };
}

export async function createMirrorWorker(connection: ConnectionOptions, deps: MirrorDeps, options: MirrorWorkerOptions = {}): Promise<MirrorWorker> {
  const log = options.log ?? SILENT_LOG;
  const prefix = bullPrefix(options.prefix);
  const queue = new Queue<MirrorJob>(MIRROR_QUEUE, { connection, ...prefix });

  const enqueue = async (runId: string): Promise<void> => {
    await queue.add(SYNC_JOB, { runId }, mirrorJobOptions(runId));
  };
  const sweep = async (): Promise<number> => {
    const ids = await runsBehindTheirMirror(deps.db);
    await Promise.all(ids.map(enqueue));
    return ids.length;
  };

  const processor = async (job: Job<MirrorJob>): Promise<SyncOutcome | { swept: number }> => {
    if (job.name === SWEEP_JOB) return { swept: await sweep() };
    const runId = job.data.runId;
    if (!runId) return { tag: "NoRun" };
    try {
      return await syncRunMirror(deps, runId);
    } catch (err) {
      if (isRetryableMirrorError(err)) throw err;
      throw new UnrecoverableError(err instanceof Error ? err.message : String(err));
    }
  };

  const worker = new Worker<MirrorJob>(MIRROR_QUEUE, processor, {
    connection,
    ...prefix,
    concurrency: options.concurrency ?? 4,
    settings: { backoffStrategy: (triesMade, _type, err) => mirrorRetryDelayMs(triesMade, err) },
  });
  worker.on("error", (err) => log.error({ err }, "mirror worker error"));
  worker.on("failed", (job, err) => {
    const runId = job?.data.runId;
    const final = !job || job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError;
    (final ? log.error : log.warn).call(log, { err, run_id: runId }, final ? "the Run's mirror gave up on this version" : "the Run's mirror will try again");
  });

  const every = options.sweepEveryMs ?? MIRROR_SWEEP_EVERY_MS;
  const reschedule = async (): Promise<void> => {
    if (every > 0) await queue.upsertJobScheduler(MIRROR_SWEEP_SCHEDULER, { every }, { name: SWEEP_JOB, data: {} });
  };

  let listener: Subscription | null = null;
  try {
    await reschedule();
    if (options.listen ?? true) {
      const onRunId = (runId: string): void => {
        enqueue(runId).catch((err: unknown) => log.error({ err, run_id: runId }, "could not enqueue the Run's mirror"));
      };
      listener = notificationsOf(deps.db).subscribe(RUN_CHANGED_CHANNEL, onRunId, {
        onReconnect: () => {
          sweep().catch((err: unknown) => log.error({ err }, "the mirror sweep failed"));
        },
        onError: (err) => log.warn({ err }, "the mirror's Postgres listener lost its connection"),
      });
      await listener.ready;
      // changes made while no worker listened
      await sweep();
    }
  } catch (err) {
    listener?.close();
    await worker.close().catch(() => undefined);
    await queue.close().catch(() => undefined);
    throw err;
  }

  return {
    queue,
    worker,
    enqueue,
    sweep,
    reschedule,
    async close() {
      listener?.close();
      await worker.close();
      await queue.close();
    },
  };
}
