// Installation jobs: reconcile the installations and repositories with GitHub (at start and
// hourly), then bring the schedulers in line and poll the newly registered repositories.
import { Worker, type ConnectionOptions } from "bullmq";
import type { GitHubApp } from "../../lib/github/app-client";
import { reconcileInstallations, type ReconcileResult } from "../../lib/github/installation-sync";
import type { Log } from "../../lib/github/log";
import type { Db } from "../../lib/store/kernel/db";
import type { WorkQueue } from "../../lib/work/work-queue";
import { bullPrefix, type InstallationJob, QUEUE_NAMES } from "../queues";
import { logWorkerErrors, type WorkerOptions } from "./poll";

export interface InstallationWorkerDeps {
  db: Db;
  github: GitHubApp;
  workQueue: WorkQueue;
  log: Log;
}

/** Reconciles installations; reconcileAtStart (default true) also runs one reconcile right away. */
export function createInstallationWorker(
  connection: ConnectionOptions,
  deps: InstallationWorkerDeps,
  options: WorkerOptions & { reconcileAtStart?: boolean } = {},
): Worker<InstallationJob, ReconcileResult> {
  const run = async (): Promise<ReconcileResult> => {
    const result = await reconcileInstallations(deps);
    await deps.workQueue.syncSchedulers();
    for (const repo of result.registered) await deps.workQueue.pollNow(repo);
    return result;
  };
  const worker = new Worker<InstallationJob, ReconcileResult>(QUEUE_NAMES.installations, run, {
    connection,
    concurrency: 1,
    ...bullPrefix(options.prefix),
  });
  logWorkerErrors(worker, deps.log, "installations");
  if (options.reconcileAtStart !== false) {
    void run().catch((err: unknown) => deps.log.error({ err: err instanceof Error ? err.message : String(err) }, "reconciling installations at start failed"));
  }
  return worker;
}
