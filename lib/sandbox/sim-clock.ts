export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;

/** The simulator's clock: real time plus an offset the control API moves forward. */
export class SimClock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`advanceClock wants a positive number of ms, got ${ms}`);
    this.offsetMs += ms;
    return this.now();
  }

  set(epochMs: number): number {
    this.offsetMs = epochMs - Date.now();
    return this.now();
  }
}

/** GitHub's timestamp format: ISO 8601, UTC, whole seconds. */
export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : isoSeconds(ms);
}
