/**
 * Adaptive poll intervals (ADR 0020). A repository is probed every `min` while it changes; each
 * probe that finds it quiet doubles its interval, up to `max`; a change seen by a probe, or a
 * webhook about it, brings it back to `min`. The interval and the time it is next due live in
 * Postgres (repositories.poll_interval_s, next_poll_at; lib/store/items/poll-schedule.ts): the
 * schedulers only tick, so a flushed Redis and a restarted worker lose nothing.
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
