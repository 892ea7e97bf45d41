// Hint jobs (id hint-<repo>#<n>, so duplicates merge while pending): re-read one Item now.
import { Worker, type ConnectionOptions, type Job } from "bullmq";
import type { TriggerDeps } from "../../lib/triggers/deps";
import { handleHint, type HintOutcome } from "../../lib/triggers/handle-hint";
import type { Hint } from "../../lib/work/work-queue";
import { bullPrefix, hintJobId, QUEUE_NAMES, takeHintSenders } from "../queues";
import { logWorkerErrors, type WorkerOptions } from "./poll";

export function createHintWorker(connection: ConnectionOptions, deps: TriggerDeps, options: WorkerOptions = {}): Worker<Hint, HintOutcome> {
  const worker: Worker<Hint, HintOutcome> = new Worker<Hint, HintOutcome>(QUEUE_NAMES.hints, async (job: Job<Hint>) => handleHint(deps, { ...job.data, senders: await takeHintSenders(await worker.getBackend().client, options.prefix, job.id ?? hintJobId(job.data)) }), {
    connection,
    concurrency: options.concurrency ?? 8,
    ...bullPrefix(options.prefix),
  });
  return logWorkerErrors(worker, deps.log, "hints");
}
