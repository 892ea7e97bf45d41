import { runningAttemptsOfWorker } from "../store/runs/attempt-sweep";
import { markWorkerStopped, unstoppedWorkersOnHost, type WorkerIdentity } from "../store/runs/worker-registry";
import { releaseLeaseOf } from "./lease";
import { closeOrphan, type SweepDeps } from "./reconcile";
import { DEFAULT_KEY_PREFIX, redisNames } from "./redis-names";

/**
 * A worker of the same host need not wait for a dead worker's heartbeat to go stale: on one
 * host, a worker whose process is gone is dead for certain. At start, and then every few
 * seconds while it lives (`watchOwnHost`), each worker looks at the workers of its host the
 * registry still counts (other ids): one whose pid no longer runs is marked stopped, its
 * leases (still held by its tokens) deleted, and its Running Attempts closed as
 * InfraFailures at once, so their Runs are retried now rather than one TTL later. Its agents
 * died with it (the sandbox's die-with-parent). A pid of another host is never looked at.
 */

/** Whether a process of this pid runs on this host (EPERM: it runs, as someone else). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const diedOnThisHost = (workerId: string, host: string) =>
  `The worker running this Attempt (${workerId}) died: its process is gone from ${host}, and a live worker there closed the Attempt so that it is retried.`;

/** Returns the Attempts closed. */
export async function recoverOwnHost(deps: SweepDeps, self: Pick<WorkerIdentity, "id" | "host">, runs: (pid: number) => boolean = processRuns): Promise<string[]> {
  const names = redisNames(deps.keyPrefix ?? DEFAULT_KEY_PREFIX);
  const dead = (await unstoppedWorkersOnHost(deps.db, self.host, self.id)).filter((w) => !runs(w.pid));
  const closed: string[] = [];
  for (const worker of dead) {
    await markWorkerStopped(deps.db, worker.id);
    for (const a of await runningAttemptsOfWorker(deps.db, worker.id)) {
      if (a.lease_token) await releaseLeaseOf(deps.redis, names.lease(a.run_id), a.lease_token);
      if (await closeOrphan(deps, a.id, diedOnThisHost(worker.id, self.host))) closed.push(a.id);
    }
  }
  return closed;
}

export interface OwnHostWatch {
  stop(): void;
}

/** `recoverOwnHost` every `everyMs` while this worker lives (the start's pass is the caller's). */
export function watchOwnHost(deps: SweepDeps, self: Pick<WorkerIdentity, "id" | "host">, everyMs: number, onError: (err: unknown) => void): OwnHostWatch {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    recoverOwnHost(deps, self)
      .catch(onError)
      .finally(() => (busy = false));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
