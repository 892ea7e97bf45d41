/**
 * When a failed delivery is tried again: exponential from 30 s, doubling, with up to 25 %
 * jitter added (never removed, so the whole series lasts at least the sum of its bases:
 * 30 s + 1 + 2 + 4 + 8 + 16 + 32 + 64 min ≈ 2 h 8 min). Nine tries in all; then it is given up
 * and waits in the delivery log for a redeliver.
 */
export const RETRY_DELAYS_SECONDS = [30, 60, 120, 240, 480, 960, 1920, 3840] as const;
export const MAX_TRIES = RETRY_DELAYS_SECONDS.length + 1;
export const JITTER = 0.25;

/** Milliseconds before try `tries + 1`, after `tries` failed ones; null when no try is left. */
export function retryDelayMs(tries: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_SECONDS[tries - 1];
  if (base === undefined) return null;
  return Math.round(base * 1000 * (1 + JITTER * random()));
}
