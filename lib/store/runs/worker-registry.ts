import type { Db } from "../kernel/db";
import { raw, sql, type Statement } from "../kernel/sql";

/**
 * The worker registry (table `workers`). Each worker process registers at start, heartbeats
 * inside the lease TTL (lib/runner/worker-heartbeat.ts) and marks itself stopped when it exits
 * cleanly. A worker is alive while its heartbeat is younger than the stale window; readiness,
 * the Workers page and the sweep of a dead worker's Attempts ask `isWorkerAlive` / `liveWorkers`.
 */

export interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  slots: number;
  running: number;
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
}

export interface WorkerIdentity {
  id: string;
  host: string;
  pid: number;
  version: string;
  slots: number;
}

/** The predicate of the registry: not stopped, and heard from within `staleAfterMs`. */
export function isWorkerAlive(worker: Pick<WorkerRow, "heartbeatAt" | "stoppedAt">, staleAfterMs: number, now = new Date()): boolean {
  return worker.stoppedAt === null && now.getTime() - worker.heartbeatAt.getTime() < staleAfterMs;
}

/**
 * The same predicate in SQL, on the workers row `alias` (which may be missing: a LEFT JOIN), for
 * the sweep: true only when the registry knows the worker and says it is dead, given the stale
 * window in ms.
 */
export const workerDeadSql = (alias: string, staleAfterMs: number): Statement => {
  const w = raw(alias);
  return sql`(${w}.id IS NOT NULL AND (${w}.stopped_at IS NOT NULL OR ${w}.heartbeat_at <= now() - make_interval(secs => ${staleAfterMs}::float8 / 1000)))`;
};

/** The workers of `host` other than `selfId` that the registry still counts as running (a restart looks at these). */
export async function unstoppedWorkersOnHost(db: Db, host: string, selfId: string): Promise<Pick<WorkerRow, "id" | "pid">[]> {
  return db.prisma.worker.findMany({ where: { host, stoppedAt: null, id: { not: selfId } }, select: { id: true, pid: true } });
}

/** Registers (or re-registers, after a restart with the same id) a worker; its heartbeat is now. */
export async function registerWorker(db: Db, worker: WorkerIdentity): Promise<void> {
  const now = new Date();
  const fields = { host: worker.host, pid: worker.pid, version: worker.version, slots: worker.slots, running: 0, startedAt: now, heartbeatAt: now, stoppedAt: null };
  await db.prisma.worker.upsert({ where: { id: worker.id }, create: { id: worker.id, ...fields }, update: fields });
}

/** Refreshes a worker's heartbeat and its count of running Attempts. */
export async function heartbeatWorker(db: Db, id: string, running: number): Promise<void> {
  await db.prisma.worker.updateMany({ where: { id, stoppedAt: null }, data: { heartbeatAt: new Date(), running } });
}

/** A clean exit: the worker is no longer counted, and nothing of it needs sweeping. */
export async function markWorkerStopped(db: Db, id: string): Promise<void> {
  await db.prisma.worker.updateMany({ where: { id }, data: { stoppedAt: new Date(), running: 0 } });
}

/** Whether the registry holds `id` as stopped: it exited, or a worker of its host found its process gone. */
export async function isWorkerStopped(db: Db, id: string): Promise<boolean> {
  const row = await db.prisma.worker.findUnique({ where: { id }, select: { stoppedAt: true } });
  return row !== null && row.stoppedAt !== null;
}

/** Every registered worker, newest heartbeat first (the Workers page). */
export async function listWorkers(db: Db): Promise<WorkerRow[]> {
  return db.prisma.worker.findMany({ orderBy: { heartbeatAt: "desc" } });
}

/** The workers alive now (readiness, "no worker is running"). */
export async function liveWorkers(db: Db, staleAfterMs: number): Promise<WorkerRow[]> {
  return db.prisma.worker.findMany({
    where: { stoppedAt: null, heartbeatAt: { gt: new Date(Date.now() - staleAfterMs) } },
    orderBy: { heartbeatAt: "desc" },
  });
}

/** Whether any worker is alive now: what a Queued Run waits for when none is. */
export async function anyWorkerAlive(db: Db, staleAfterMs: number): Promise<boolean> {
  const alive = await db.prisma.worker.findFirst({ where: { stoppedAt: null, heartbeatAt: { gt: new Date(Date.now() - staleAfterMs) } }, select: { id: true } });
  return alive !== null;
}
