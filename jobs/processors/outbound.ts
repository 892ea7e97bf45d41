import { Queue, Worker, type ConnectionOptions, type Job } from "bullmq";
import { attemptDelivery, dueDeliveries, dueDeliveriesOfRun, type DeliveryDeps, type DeliveryOutcome } from "../../lib/outbound/attempt-delivery";
import { bullPrefix, type DeliverJob, QUEUE_NAMES } from "../queues";
import { notificationsOf, type Subscription } from "../../lib/store/kernel/notifications";
import { RUN_CHANGED_CHANNEL } from "../../lib/store/runs/run-changed";
import { SILENT_LOG, type WorkerLog } from "./worker-log";
import { recordRunNotices, recordSweptNotices } from "../../lib/notify/notice-scan";

/**
 * The outbound worker, on the "deliveries" queue. A webhook's delivery row is written in the
 * transaction of the Run's terminal state; a notice's (lib/notify/notice-scan.ts) by this worker
 * when a Run's `atelier_run_changed` notification comes, or by its sweep. The notification
 * makes this worker queue the Run's due deliveries at once. Each job is one try
 * (lib/outbound/attempt-delivery.ts); a failed try is queued again after its backoff. A local
 * sweep (no Redis needed) tries every due pending row itself, so a lost notification, a lost
 * job or a flushed Redis delays a delivery but never drops it.
 */

export const OUTBOUND_SWEEP_EVERY_MS = 15_000;
const DELIVER_JOB = "deliver";

export type OutboundDeps = DeliveryDeps & {
  /** where the Run pages are, for the notices' links (ATELIER_PUBLIC_URL) */
  publicUrl: string;
};

export interface OutboundWorkerOptions {
  /** BullMQ key prefix (default the instance's); tests use one per file. */
  prefix?: string;
  /** Tries at once (default 4). */
  concurrency?: number;
  /** The local sweep's period; 0 turns the timer off (tests call sweep()). */
  sweepEveryMs?: number;
  /** Listen to Postgres notifications (default true). */
  listen?: boolean;
  log?: WorkerLog;
}

export interface OutboundWorker {
  readonly queue: Queue<DeliverJob>;
  readonly worker: Worker<DeliverJob>;
  /** Queues one try of a delivery (now, or after `delayMs`). */
  enqueue(deliveryId: number, opts?: { delayMs?: number; tries?: number }): Promise<void>;
  /** Tries every due pending delivery here and now; returns the outcomes. */
  sweep(): Promise<DeliveryOutcome[]>;
  close(): Promise<void>;
}

/**
 * The first try shares jobs/queues.ts's id (`delivery-<id>`, so BullWorkQueue.deliver and the
 * listener coalesce); a retry gets its own (`delivery-<id>-<tries>`), since the job that
 * queues it is still active under the first id.
 */
export const deliveryJobId = (deliveryId: number, tries = 0): string =>
  tries > 0 ? `delivery-${deliveryId}-${tries}` : `delivery-${deliveryId}`;

export async function createOutboundWorker(
  connection: ConnectionOptions,
  deps: OutboundDeps,
  options: OutboundWorkerOptions = {},
): Promise<OutboundWorker> {
  const log = options.log ?? SILENT_LOG;
  const prefix = bullPrefix(options.prefix);
  const queue = new Queue<DeliverJob>(QUEUE_NAMES.deliveries, { connection, ...prefix });

  const enqueue = async (deliveryId: number, opts: { delayMs?: number; tries?: number } = {}): Promise<void> => {
    await queue.add(DELIVER_JOB, { deliveryId }, {
      jobId: deliveryJobId(deliveryId, opts.tries),
      removeOnComplete: true,
      removeOnFail: true,
      ...(opts.delayMs ? { delay: opts.delayMs } : {}),
    });
  };

  const tryOne = async (deliveryId: number): Promise<DeliveryOutcome> => {
    const outcome = await attemptDelivery(deps, deliveryId);
    if (outcome.tag === "Retry") {
      log.warn({ outbound_delivery_id: deliveryId, tries: outcome.tries, error: outcome.error, delayMs: outcome.delayMs }, "webhook delivery failed; it will be tried again");
      await enqueue(deliveryId, { delayMs: outcome.delayMs, tries: outcome.tries }).catch((err: unknown) =>
        log.warn({ err, outbound_delivery_id: deliveryId }, "could not queue the next try; the sweep will find it"),
      );
    } else if (outcome.tag === "GaveUp") {
      log.error({ outbound_delivery_id: deliveryId, tries: outcome.tries, error: outcome.error }, "webhook delivery gave up; it can be redelivered from the delivery log");
    }
    return outcome;
  };

  const worker = new Worker<DeliverJob>(QUEUE_NAMES.deliveries, (job: Job<DeliverJob>) => tryOne(job.data.deliveryId), {
    connection,
    ...prefix,
    concurrency: options.concurrency ?? 4,
  });
  worker.on("error", (err) => log.error({ err }, "outbound worker error"));

  let sweeping: Promise<DeliveryOutcome[]> | null = null;
  const sweep = (): Promise<DeliveryOutcome[]> => {
    sweeping ??= (async () => {
      const outcomes: DeliveryOutcome[] = [];
      await recordSweptNotices(deps).catch((err: unknown) => log.error({ err }, "could not look for notices"));
      for (const id of await dueDeliveries(deps.db)) outcomes.push(await tryOne(id));
      return outcomes;
    })().finally(() => {
      sweeping = null;
    });
    return sweeping;
  };
  const every = options.sweepEveryMs ?? OUTBOUND_SWEEP_EVERY_MS;
  const timer = every > 0 ? setInterval(() => void sweep().catch((err: unknown) => log.error({ err }, "the outbound sweep failed")), every) : null;
  timer?.unref();

  let listener: Subscription | null = null;
  if (options.listen ?? true) {
    const onRunId = (runId: string): void => {
      recordRunNotices(deps, [runId])
        .then(() => dueDeliveriesOfRun(deps.db, runId))
        .then((ids) => Promise.all(ids.map((id) => enqueue(id))))
        .catch((err: unknown) => log.error({ err, run_id: runId }, "could not queue the Run's webhook deliveries"));
    };
    listener = notificationsOf(deps.db).subscribe(RUN_CHANGED_CHANNEL, onRunId, {
      onReconnect: () => void sweep().catch(() => undefined),
      onError: (err) => log.warn({ err }, "the outbound worker's Postgres listener lost its connection"),
    });
    await listener.ready;
  }

  return {
    queue,
    worker,
    enqueue,
    sweep,
    async close() {
      if (timer) clearInterval(timer);
      listener?.close();
      await worker.close();
      await queue.close();
      await sweeping?.catch(() => undefined);
    },
  };
}
