import type { Db } from "../store/kernel/db";
import { attemptLease } from "../store/runs/attempt-lease";
import type { AttemptRef } from "../store/runs/attempts";

/**
 * While an Attempt runs, its row is read every third of the lease TTL: a row closed as
 * Canceled means an operator canceled (the pub/sub message may have been missed); a row closed
 * otherwise, or carrying another lease token, means this worker no longer owns the Attempt.
 */
export interface AttemptWatch {
  stop(): void;
}

export function watchAttemptRow(
  db: Db,
  attempt: AttemptRef,
  everyMs: number,
  on: { canceled(): void; lost(): void },
): AttemptWatch {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const row = await attemptLease(db, attempt.id);
      if (row?.state === "Canceled") on.canceled();
      else if (!row || row.state !== "Running" || row.lease_token !== attempt.leaseToken) on.lost();
    } catch {
      // the database is unreachable: the lease decides, and the outcome write is fenced anyway
    } finally {
      busy = false;
    }
  }, everyMs);
  return { stop: () => clearInterval(timer) };
}
