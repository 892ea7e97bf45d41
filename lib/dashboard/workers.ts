import { WORKER_STALE_AFTER_MS } from "../runner/worker-heartbeat";
import type { Viewer } from "../auth/viewer";
import type { Db } from "../store/kernel/db";
import { isWorkerAlive, listWorkers, liveWorkers, type WorkerRow } from "../store/runs/worker-registry";

/**
 * The Workers page (from the worker registry): each worker process, where it runs, its slots
 * and running Attempts, its last heartbeat and version, alive or not; and the banner every page
 * shows when none is alive.
 */

/**
 * A worker's row as the page shows it: times as ISO strings, and whether it is alive. Where it
 * runs (its id names its host and pid), its pid and its version are shown to instance admins
 * only: to anyone else a worker is a number, its state and its load.
 */
export interface WorkerView extends Omit<WorkerRow, "startedAt" | "heartbeatAt" | "stoppedAt" | "host" | "pid" | "version"> {
  host: string | null;
  pid: number | null;
  version: string | null;
  startedAt: string;
  heartbeatAt: string;
  stoppedAt: string | null;
  alive: boolean;
}

/** How many stopped or dead workers the page keeps showing after the live ones. */
const GONE_SHOWN = 50;

export async function getWorkers(db: Db, viewer: Pick<Viewer, "admin">, now = new Date()): Promise<{ workers: WorkerView[]; live: number }> {
  const rows = await listWorkers(db);
  const workers = rows.map((w) => ({
    id: w.id,
    host: w.host,
    pid: w.pid,
    version: w.version,
    slots: w.slots,
    running: isWorkerAlive(w, WORKER_STALE_AFTER_MS, now) ? w.running : 0,
    startedAt: w.startedAt.toISOString(),
    heartbeatAt: w.heartbeatAt.toISOString(),
    stoppedAt: w.stoppedAt?.toISOString() ?? null,
    alive: isWorkerAlive(w, WORKER_STALE_AFTER_MS, now),
  }));
  const alive = workers.filter((w) => w.alive);
  const shown = [...alive, ...workers.filter((w) => !w.alive).slice(0, GONE_SHOWN)];
  return { workers: viewer.admin ? shown : shown.map((w, i) => ({ ...w, id: `worker ${i + 1}`, host: null, pid: null, version: null })), live: alive.length };
}

export const NO_WORKER_WARNING =
  "No worker is running: Runs open and wait, but no Attempt starts. Start one (npm run worker, or the worker Deployment) — the Workers page shows the last ones seen.";

/** The banner's sentence when no worker is alive; null when one is, or when the registry cannot be read. */
export async function noLiveWorkerWarning(db: Db): Promise<string | null> {
  try {
    return (await liveWorkers(db, WORKER_STALE_AFTER_MS)).length === 0 ? NO_WORKER_WARNING : null;
  } catch {
    return null; // the database is away: the pages say so themselves
  }
}
