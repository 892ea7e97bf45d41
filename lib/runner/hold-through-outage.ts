import { outageOf } from "../errors";
import { databaseUrlOf, type Db } from "../store/kernel/db";

/**
 * An Attempt whose agent finished while Postgres is away keeps its outcome: the write is held
 * and tried again with backoff (the lease is kept meanwhile: its heartbeat is Redis's) until
 * the database answers, the deadline passes (the Attempt's remaining budget), or the lease is
 * lost. Any other error is thrown at once.
 */

export const HOLD_FIRST_DELAY_MS = 500;
export const HOLD_MAX_DELAY_MS = 5_000;

/** The database did not answer before the deadline: the outcome was not recorded. */
export class DatabaseAwayError extends Error {
  constructor(
    readonly heldMs: number,
    cause: unknown,
  ) {
    super(`the database (Postgres) did not answer for ${Math.round(heldMs / 1000)} s`, { cause });
    this.name = "DatabaseAwayError";
  }
}

/** Whether `err` says that this Db's Postgres cannot be reached (told apart by its own port). */
export function isDatabaseOutage(db: Db, err: unknown): boolean {
  return outageOf(err, { DATABASE_URL: databaseUrlOf(db) }) === "database";
}

export interface HoldOptions {
  /** Epoch ms after which no further try is made. */
  until: number;
  /** Aborted: stop holding (the lease was lost, or the worker stops). */
  signal: AbortSignal;
  /** Each time a try met the outage, with the wait before the next one. */
  onHeld?: (err: unknown, retryInMs: number) => void;
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

export async function holdThroughOutage<T>(db: Db, write: () => Promise<T>, options: HoldOptions): Promise<T> {
  const began = Date.now();
  let delay = HOLD_FIRST_DELAY_MS;
  for (;;) {
    try {
      return await write();
    } catch (err) {
      if (!isDatabaseOutage(db, err)) throw err;
      if (options.signal.aborted || Date.now() + delay > options.until) throw new DatabaseAwayError(Date.now() - began, err);
      options.onHeld?.(err, delay);
      await pause(delay, options.signal);
      delay = Math.min(delay * 2, HOLD_MAX_DELAY_MS);
    }
  }
}
