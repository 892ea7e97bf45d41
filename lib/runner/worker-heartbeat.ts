import { hostname } from "node:os";
import { heartbeatWorker, markWorkerStopped, registerWorker, type WorkerIdentity } from "../store/runs/worker-registry";
import type { Db } from "../store/kernel/db";
import { DEFAULT_LEASE_TTL_MS } from "./lease";

/**
 * A worker's entry in the registry (lib/store/runs/worker-registry.ts): registered at start, its heartbeat
 * refreshed three times per lease TTL with the number of Attempts it runs, marked stopped on a
 * clean exit. A worker not heard from for one lease TTL is dead.
 */

/** How long a silent worker counts as alive: one lease TTL. */
export const WORKER_STALE_AFTER_MS = DEFAULT_LEASE_TTL_MS;

export interface WorkerHeartbeat {
  /** Stops the heartbeat and marks the worker stopped. */
  stop(): Promise<void>;
}

export interface WorkerHeartbeatOptions {
  everyMs?: number;
  /** A failed heartbeat (the database away): reported, and tried again at the next beat. */
  onError?: (err: unknown) => void;
}

export function workerIdentity(id: string, slots: number, version: string): WorkerIdentity {
  return { id, host: hostname(), pid: process.pid, version, slots };
}

export async function startWorkerHeartbeat(
  db: Db,
  identity: WorkerIdentity,
  running: () => number,
  options: WorkerHeartbeatOptions = {},
): Promise<WorkerHeartbeat> {
  await registerWorker(db, identity);
  const timer = setInterval(() => {
    heartbeatWorker(db, identity.id, running()).catch((err: unknown) => options.onError?.(err));
  }, options.everyMs ?? Math.floor(WORKER_STALE_AFTER_MS / 3));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await markWorkerStopped(db, identity.id).catch((err: unknown) => options.onError?.(err));
    },
  };
}
