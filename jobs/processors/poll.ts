// Poll jobs: the poll tick (lib's adaptive polling of the due repositories) and "poll now" (one cycle).
import { Worker, type ConnectionOptions, type Job } from "bullmq";
import type { TriggerDeps } from "../../lib/triggers/deps";
import { pollDueRepositories } from "../../lib/triggers/poll-installation";
import { pollRepository, type PollOutcome } from "../../lib/triggers/poll-repository";
import { bullPrefix, type PollJob, QUEUE_NAMES } from "../queues";

export interface WorkerOptions {
  prefix?: string;
  concurrency?: number;
}

/** Polls up to `repositoryConcurrency` repositories at once. A failed cycle is not retried: the next one reads the same Items. */
export function createPollWorker(connection: ConnectionOptions, deps: TriggerDeps, options: WorkerOptions = {}): Worker<PollJob, PollOutcome[]> {
  const poll = (job: Job<PollJob>) => (job.data.repo ? pollRepository(deps, job.data.repo).then((o) => [o]) : pollDueRepositories(deps));
  const worker = new Worker<PollJob, PollOutcome[]>(QUEUE_NAMES.poll, poll, {
    connection,
    concurrency: options.concurrency ?? deps.repositoryConcurrency,
    ...bullPrefix(options.prefix),
  });
  return logWorkerErrors(worker, deps.log, "poll");
}

/** A worker's own errors (Redis lost, a job that threw) go to the log instead of crashing the process. */
export function logWorkerErrors<W extends Worker>(worker: W, log: TriggerDeps["log"], name: string): W {
  worker.on("error", (err) => log.error({ err: err.message, worker: name }, "worker error"));
  worker.on("failed", (job, err) => log.error({ err: err.message, worker: name, job: job?.id }, "job failed"));
  return worker;
}
