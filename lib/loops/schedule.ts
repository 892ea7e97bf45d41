import { CronExpressionParser, type CronExpression } from "cron-parser";
import { BadInputError } from "../errors";

/**
 * Schedule helpers for schedule Loops: pure functions of (cron, tz, instant).
 *
 * A cron expression names wall-clock times in its time zone. Each wall-clock time it names
 * becomes one Tick, at one instant:
 * - a wall-clock time that occurs twice (the night the clocks go back) fires at its first
 *   occurrence only, so each wall-clock time fires at most once;
 * - a wall-clock time that does not exist (the night the clocks go forward) fires once, shifted
 *   forward by the gap (02:30 in Europe/Paris on 2026-03-29 fires at 03:30 CEST), so a daily
 *   schedule never loses its day; two wall times that land on the same instant are one Tick.
 * The walk over wall-clock times is cron-parser's, in UTC (where no clock ever jumps); the time
 * zone only maps wall times to instants. `latestTickAtOrBefore` and `nextTickAfter` therefore
 * describe the same set of Ticks.
 */

const FIELD_NAMES = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const;
const NUMERIC_FIELD = /^[\d*,\-/]+$/;
const MONTH_FIELD = /^(?:[\d*,\-/]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)+$/i;
const WEEKDAY_FIELD = /^(?:[\d*,\-/]|sun|mon|tue|wed|thu|fri|sat)+$/i;

const DAY_MS = 86_400_000;
/** A bound on walks; near a clock change a walk spans a few hours of a five-field cron. */
const MAX_STEPS = 10_000;

/**
 * Why `cron` is not a usable schedule, as a sentence that says what to fix; null when it is.
 * Accepted: five fields (minute hour day-of-month month day-of-week) with numbers, `*`, `,`,
 * `-`, `/`, and month or weekday names — the syntax of GitHub Actions' `schedule`.
 */
export function validateCron(cron: string): string | null {
  if (typeof cron !== "string" || cron.trim() === "") {
    return "The cron expression is empty: write five fields, minute hour day-of-month month day-of-week, e.g. \"0 6 * * 1-5\".";
  }
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) {
    return `The cron expression "${cron}" has ${fields.length} field${fields.length === 1 ? "" : "s"}; write exactly five: minute hour day-of-month month day-of-week (e.g. "0 6 * * 1-5").`;
  }
  for (const [i, field] of fields.entries()) {
    const pattern = i === 3 ? MONTH_FIELD : i === 4 ? WEEKDAY_FIELD : NUMERIC_FIELD;
    if (!pattern.test(field)) {
      return `The ${FIELD_NAMES[i]} field "${field}" of the cron expression "${cron}" is not supported: use numbers, *, ranges (a-b), lists (a,b) and steps (/n)${i >= 3 ? ", or names" : ""}.`;
    }
  }
  try {
    CronExpressionParser.parse(fields.join(" "), { tz: "UTC", currentDate: new Date(0) }).next();
  } catch (err) {
    return `The cron expression "${cron}" is not valid: ${describeCronParserError(err)}.`;
  }
  return null;
}

/** Why `tz` is not a usable IANA time zone, as a sentence; null when it is. */
export function validateTimeZone(tz: string): string | null {
  if (typeof tz !== "string" || tz.trim() === "") {
    return 'The time zone is empty: write an IANA time zone name such as "Europe/Paris" or "UTC".';
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    return `"${tz}" is not a time zone: write an IANA time zone name such as "Europe/Paris", "America/New_York" or "UTC".`;
  }
  return null;
}

/** The latest Tick at or before `now`, or null when the schedule has none. */
export function latestTickAtOrBefore(cron: string, tz: string, now: Date): Date | null {
  assertSchedule(cron, tz);
  const nowMs = now.getTime();
  // Only wall times up to `spread` past now's wall time can map to an instant at or before now.
  const walk = wallWalk(cron, wallMsOf(nowMs, tz) + offsetSpread(nowMs, tz) + 1);
  let best: number | null = null;
  let stopBelow = -Infinity;
  for (let i = 0; i < MAX_STEPS; i++) {
    const wall = safeStep(walk, "prev");
    if (wall === null || wall < stopBelow) break;
    const instant = instantOfWall(wall, tz);
    if (instant <= nowMs && (best === null || instant > best)) {
      best = instant;
      // Earlier wall times map to earlier instants, give or take the offsets' spread there.
      stopBelow = wall - offsetSpread(instant, tz);
    }
  }
  return best === null ? null : new Date(best);
}

/** The first Tick strictly after `now`, or null when the schedule has none. */
export function nextTickAfter(cron: string, tz: string, now: Date): Date | null {
  assertSchedule(cron, tz);
  const nowMs = now.getTime();
  const walk = wallWalk(cron, wallMsOf(nowMs, tz) - offsetSpread(nowMs, tz) - 1);
  let best: number | null = null;
  let stopAbove = Infinity;
  for (let i = 0; i < MAX_STEPS; i++) {
    const wall = safeStep(walk, "next");
    if (wall === null || wall > stopAbove) break;
    const instant = instantOfWall(wall, tz);
    if (instant > nowMs && (best === null || instant < best)) {
      best = instant;
      stopAbove = wall + offsetSpread(instant, tz);
    }
  }
  return best === null ? null : new Date(best);
}

/** `date` as local ISO wall time in `tz`, with its offset: "2026-03-29T03:30:00+02:00". */
export function localIso(date: Date, tz: string): string {
  const w = wallTime(date, tz);
  const wallAsUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  const offsetMinutes = Math.round((wallAsUtc - Math.floor(date.getTime() / 1000) * 1000) / 60_000);
  const sign = offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(offsetMinutes);
  return (
    `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

// ---------------------------------------------------------------------------------------------

/**
 * The instant of a wall-clock time `wall` (given as if it were UTC, in ms): the first of two
 * when the clocks went back; with the offset from before the change when it does not exist.
 */
function instantOfWall(wall: number, tz: string): number {
  const before = wall - offsetAt(wall - DAY_MS, tz);
  const after = wall - offsetAt(wall + DAY_MS, tz);
  const beforeExists = wallMsOf(before, tz) === wall;
  const afterExists = wallMsOf(after, tz) === wall;
  if (beforeExists && afterExists) return Math.min(before, after);
  if (afterExists) return after;
  return before; // exists with the earlier offset, or in a gap: shifted forward by the gap
}

/** How much the offset varies within a day of `ms` (0 far from any clock change). */
function offsetSpread(ms: number, tz: string): number {
  const offsets = [offsetAt(ms - DAY_MS, tz), offsetAt(ms, tz), offsetAt(ms + DAY_MS, tz)];
  return Math.max(...offsets) - Math.min(...offsets);
}

/** The offset of `tz` from UTC at instant `ms`, in ms (Paris in winter: 3_600_000). */
function offsetAt(ms: number, tz: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return wallMsOf(whole, tz) - whole;
}

/** The wall-clock time of instant `ms` in `tz`, as if it were UTC, in ms. */
function wallMsOf(ms: number, tz: string): number {
  const w = wallTime(new Date(ms), tz);
  const millis = ((ms % 1000) + 1000) % 1000;
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) + millis;
}

function assertSchedule(cron: string, tz: string): void {
  const cronProblem = validateCron(cron);
  if (cronProblem) throw new BadInputError("config_bad_cron", cronProblem, { cron });
  const tzProblem = validateTimeZone(tz);
  if (tzProblem) throw new BadInputError("config_bad_timezone", tzProblem, { tz });
}

/** cron-parser walking wall-clock times (in UTC, where no clock jumps) from `wallMs`. */
function wallWalk(cron: string, wallMs: number): CronExpression {
  return CronExpressionParser.parse(cron.trim(), { tz: "UTC", currentDate: new Date(wallMs) });
}

function safeStep(expr: CronExpression, dir: "next" | "prev"): number | null {
  try {
    return expr[dir]().toDate().getTime();
  } catch {
    return null; // out of range: the schedule has no further Tick that way
  }
}

function describeCronParserError(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const constraint = /got value (\S+) expected range (\S+)/i.exec(raw);
  if (constraint) return `the value ${constraint[1]} is outside the range ${constraint[2]}`;
  if (/day of month/i.test(raw)) return "that day of the month never occurs in the chosen months";
  return raw.replace(/\.$/, "").replace(/^\w/, (c) => c.toLowerCase());
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallTime(date: Date, tz: string): Wall {
  let fmt = formatters.get(tz);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      era: "short",
    });
    formatters.set(tz, fmt);
  }
  const parts: Record<string, string> = {};
  for (const p of fmt.formatToParts(date)) parts[p.type] = p.value;
  const year = Number(parts.year);
  return {
    year: parts.era === "BC" ? 1 - year : year,
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}
