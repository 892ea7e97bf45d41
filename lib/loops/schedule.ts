import { CronExpressionParser, type CronExpression } from "cron-parser";
import { BadInputError } from "../errors";

/**
 * Schedule helpers for schedule Loops: pure functions of (cron, tz, instant).
 *
 * What a Tick is, across daylight-saving changes:
 * - A Tick is an instant of the forward walk of the cron expression in its time zone.
 * - A wall-clock time that occurs twice (the night the clocks go back) fires only at its first
 *   occurrence: each wall-clock time fires at most once.
 * - A wall-clock time that does not exist (the night the clocks go forward) fires once, shifted
 *   forward by the gap (02:30 in Europe/Paris on 2026-03-29 fires at 03:30 CEST), so a daily
 *   schedule never loses its day.
 * `latestTickAtOrBefore` and `nextTickAfter` describe the same set of Ticks.
 */

const FIELD_NAMES = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const;
const NUMERIC_FIELD = /^[\d*,\-/]+$/;
const MONTH_FIELD = /^(?:[\d*,\-/]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)+$/i;
const WEEKDAY_FIELD = /^(?:[\d*,\-/]|sun|mon|tue|wed|thu|fri|sat)+$/i;

/** How far back a repeated wall-clock time may lie (Lord Howe shifts 30 min; some zones 2 h). */
const REPEAT_SHIFTS_MS = [30, 60, 120].map((m) => m * 60_000);
/** A bound on walks; a five-field cron has at most 1440 Ticks a day. */
const MAX_STEPS = 5_000;

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
  try {
    CronExpressionParser.parse("0 0 * * *", { tz, currentDate: new Date(0) }).next();
  } catch {
    return `"${tz}" is not a time zone the scheduler understands: write an IANA time zone name such as "Europe/Paris" or "UTC".`;
  }
  return null;
}

/** The latest Tick at or before `now`, or null when the schedule has none. */
export function latestTickAtOrBefore(cron: string, tz: string, now: Date): Date | null {
  const expr = parseOrThrow(cron, tz, new Date(now.getTime() + 1));
  const anchor = latestPlainTick(expr, tz);
  if (!anchor) return null;
  // Ticks shifted out of a daylight-saving gap are only seen by the forward walk.
  let latest = anchor;
  expr.reset(anchor);
  for (let i = 0; i < MAX_STEPS; i++) {
    const next = safeStep(expr, "next");
    if (!next || next.getTime() > now.getTime()) break;
    if (!isRepeatedWallTime(next, tz)) latest = next;
  }
  return latest;
}

/** The first Tick strictly after `now`, or null when the schedule has none. */
export function nextTickAfter(cron: string, tz: string, now: Date): Date | null {
  const expr = parseOrThrow(cron, tz, new Date(now.getTime() + 1));
  // Walk from a plain Tick so the result is the one latestTickAtOrBefore will see.
  const anchor = latestPlainTick(expr, tz);
  expr.reset(anchor ?? now);
  for (let i = 0; i < MAX_STEPS; i++) {
    const next = safeStep(expr, "next");
    if (!next) return null;
    if (next.getTime() > now.getTime() && !isRepeatedWallTime(next, tz)) return next;
  }
  return null;
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

/** True when the wall-clock time of `date` in `tz` already occurred earlier (clocks went back). */
export function isRepeatedWallTime(date: Date, tz: string): boolean {
  const wall = wallKey(date, tz);
  return REPEAT_SHIFTS_MS.some((shift) => wallKey(new Date(date.getTime() - shift), tz) === wall);
}

// ---------------------------------------------------------------------------------------------

/** The latest wall-clock match at or before the expression's current date, first occurrences only. */
function latestPlainTick(expr: CronExpression, tz: string): Date | null {
  for (let i = 0; i < MAX_STEPS; i++) {
    const prev = safeStep(expr, "prev");
    if (!prev) return null;
    if (!isRepeatedWallTime(prev, tz)) return prev;
  }
  return null;
}

function parseOrThrow(cron: string, tz: string, currentDate: Date): CronExpression {
  const cronProblem = validateCron(cron);
  if (cronProblem) throw new BadInputError("config_bad_cron", cronProblem, { cron });
  const tzProblem = validateTimeZone(tz);
  if (tzProblem) throw new BadInputError("config_bad_timezone", tzProblem, { tz });
  return CronExpressionParser.parse(cron.trim(), { tz, currentDate });
}

function safeStep(expr: CronExpression, dir: "next" | "prev"): Date | null {
  try {
    return expr[dir]().toDate();
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

function wallKey(date: Date, tz: string): string {
  const w = wallTime(date, tz);
  return `${w.year}-${w.month}-${w.day} ${w.hour}:${w.minute}:${w.second}`;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}
