import type { Redis } from "ioredis";

/**
 * Redis holds only what Postgres can rebuild (invariant 1), but nothing rebuilds it unless
 * someone notices it is gone: after a FLUSHALL the poll and schedule schedulers, the
 * installations' reconcile and the maintenance scheduler are lost with the queues. Each worker
 * keeps a marker key and looks for it every few seconds — one EXISTS when nothing is missing.
 * When it is gone, the worker rebuilds everything from Postgres (the caller's `rebuild`) and
 * sets the marker again. Several workers may rebuild at once: every step is idempotent.
 */

/** 5 s: polling, schedules and the open Runs' jobs are back within seconds of a FLUSHALL (one EXISTS each time). */
export const REBUILD_GUARD_EVERY_MS = 5_000;

export interface RebuildGuard {
  /** Looks once (what the timer does); true when it had to rebuild. */
  check(): Promise<boolean>;
  stop(): void;
}

export interface RebuildGuardOptions {
  everyMs?: number;
  onError?: (err: unknown) => void;
  onRebuilt?: () => void;
}

export async function startRebuildGuard(redis: Redis, marker: string, rebuild: () => Promise<void>, options: RebuildGuardOptions = {}): Promise<RebuildGuard> {
  await redis.set(marker, String(Date.now()));
  let busy: Promise<boolean> | null = null;
  const check = (): Promise<boolean> => {
    busy ??= (async () => {
      try {
        if ((await redis.exists(marker)) === 1) return false;
        await rebuild();
        await redis.set(marker, String(Date.now()));
        options.onRebuilt?.();
        return true;
      } finally {
        busy = null;
      }
    })();
    return busy;
  };
  const timer = setInterval(() => void check().catch((err: unknown) => options.onError?.(err)), options.everyMs ?? REBUILD_GUARD_EVERY_MS);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
