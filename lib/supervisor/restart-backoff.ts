/**
 * When the supervisor starts a crashed child again: 1 s after its first crash, doubling up to
 * 30 s while it keeps crashing; a child that stayed up for a minute starts the count again.
 */
export const RESTART_BASE_MS = 1_000;
export const RESTART_MAX_MS = 30_000;
export const STABLE_AFTER_MS = 60_000;

export function restartDelayMs(consecutiveCrashes: number): number {
  const exponent = Math.max(0, consecutiveCrashes - 1);
  return Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** Math.min(exponent, 10));
}

/** The crash count after a child that ran `upMs` ended. */
export function nextCrashCount(previous: number, upMs: number): number {
  return upMs >= STABLE_AFTER_MS ? 1 : previous + 1;
}
