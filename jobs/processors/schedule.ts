// Schedule jobs (one job scheduler per schedule Loop, cron + tz): fire the Loop's latest Tick.
import { Worker, type ConnectionOptions, type Job } from "bullmq";
import type { TriggerDeps } from "../../lib/triggers/deps";
import { fireMissedTicks, fireSchedule, type TickOutcome } from "../../lib/triggers/fire-schedule";
import { bullPrefix, QUEUE_NAMES, type ScheduleJob } from "../queues";
import { logWorkerErrors, type WorkerOptions } from "./poll";

/**
 * The schedule worker. At start it fires every schedule Loop's latest Tick once (one missed
 * while no worker ran fires now; one already fired is a duplicate the ledger drops), unless
 * `fireMissed` is false.
 */
export function createScheduleWorker(
  connection: ConnectionOptions,
  deps: TriggerDeps,
  options: WorkerOptions & { fireMissed?: boolean } = {},
): Worker<ScheduleJob, TickOutcome> {
  const worker = new Worker<ScheduleJob, TickOutcome>(
    QUEUE_NAMES.schedules,
    (job: Job<ScheduleJob>) => fireSchedule(deps, job.data.repo, job.data.loop, wakeTime(deps, job)),
    { connection, concurrency: options.concurrency ?? 4, ...bullPrefix(options.prefix) },
  );
  logWorkerErrors(worker, deps.log, "schedules");
  if (options.fireMissed !== false) {
    void fireMissedTicks(deps).catch((err: unknown) => deps.log.error({ err: err instanceof Error ? err.message : String(err) }, "firing missed Ticks failed"));
  }
  return worker;
}

/** The Tick a job stands for: never before the instant BullMQ scheduled it (a clock behind must not fire the previous Tick). */
function wakeTime(deps: TriggerDeps, job: Job): Date {
  const due = job.timestamp + (job.opts.delay ?? 0);
  return new Date(Math.max(deps.clock.now(), due));
}
