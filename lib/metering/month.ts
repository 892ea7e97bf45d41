/**
 * Metering months are calendar months in UTC: a month's key is `YYYY-MM` and its counters
 * reset at the first instant of the next month.
 */

/** `YYYY-MM` of the UTC month holding `at`. */
export function monthKey(at: Date): string {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, "0")}`;
}

/** The first instant (UTC) of the month holding `at`. */
export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** When the monthly counters of `at`'s month reset: the first instant of the next UTC month. */
export function resetAt(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** Parses a `YYYY-MM` key back to its first instant; null when it is not one. */
export function parseMonthKey(key: string): Date | null {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(key);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)) : null;
}

/** The UTC days of the month holding `at`, as `YYYY-MM-DD`. */
export function daysOfMonth(at: Date): string[] {
  const start = monthStart(at);
  const end = resetAt(at);
  const days: string[] = [];
  for (let d = start; d < end; d = new Date(d.getTime() + 86_400_000)) days.push(d.toISOString().slice(0, 10));
  return days;
}
