import type { Db } from "../store/db";

/**
 * Adaptive poll intervals (ADR 0020). A repository is probed every `min` while it changes; each
 * probe that finds it quiet doubles its interval, up to `max`; a change seen by a probe, or a
 * webhook about it, brings it back to `min`. The interval and the time it is next due live in
 * Postgres (repositories.poll_interval_s, next_poll_at): the schedulers only tick, so a flushed
 * Redis and a restarted worker lose nothing.
 */
export interface PollIntervals {
  minSeconds: number;
  maxSeconds: number;
}

/** The longest a quiet repository waits between probes: with one tick of lateness, under 5 minutes. */
export const MAX_POLL_INTERVAL_SECONDS = 240;

/** The bounds for an instance whose shortest interval is `minSeconds` (poll_interval_seconds). */
export const pollIntervals = (minSeconds: number): PollIntervals => ({ minSeconds, maxSeconds: Math.max(minSeconds, MAX_POLL_INTERVAL_SECONDS) });

/** The interval after a probe: the shortest after a change, else twice the last (null: the shortest), at most the longest. */
export function nextInterval(current: number | null, changed: boolean, bounds: PollIntervals): number {
  if (changed || current === null) return bounds.minSeconds;
  return Math.min(bounds.maxSeconds, Math.max(bounds.minSeconds, current * 2));
}

/**
 * Writes the interval a probe chose and when the repository is due next; a quiet probe also
 * counts as the repository's last poll (`quietAt`: nothing changed, so what is stored is current).
 */
export async function scheduleNextPoll(db: Db, repo: string, intervalSeconds: number, now: number, quietAt: Date | null): Promise<void> {
  await db.pool.query(
    `UPDATE repositories SET poll_interval_s = $2, next_poll_at = $3,
            last_polled_at = COALESCE($4, last_polled_at), poll_error = CASE WHEN $4::timestamp IS NULL THEN poll_error END,
            poll_error_at = CASE WHEN $4::timestamp IS NULL THEN poll_error_at END
      WHERE full_name = $1`,
    [repo.toLowerCase(), intervalSeconds, new Date(now + intervalSeconds * 1000), quietAt],
  );
}

/** A webhook about the repository: back to the shortest interval, due at the next tick. */
export async function pollSoon(db: Db, repo: string, now: number): Promise<void> {
  await db.pool.query(
    `UPDATE repositories SET poll_interval_s = NULL, next_poll_at = LEAST(next_poll_at, $2) WHERE full_name = $1`,
    [repo.toLowerCase(), new Date(now)],
  );
}

/**
 * Redis lost its data (FLUSHALL, a new server): the webhooks received meanwhile may have lost
 * their Hints, so every repository is due at the next tick, each keeping its interval (a quiet
 * one goes back to it after that one probe). Returns how many repositories were made due.
 */
export async function pollEverySoon(db: Db, now: number): Promise<number> {
  const { rowCount } = await db.pool.query(
    `UPDATE repositories SET next_poll_at = $1 WHERE next_poll_at IS NOT NULL AND next_poll_at > $1`,
    [new Date(now)],
  );
  return rowCount ?? 0;
}
