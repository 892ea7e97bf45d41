import { DEFAULT_TIME_ZONE, SCHEDULE_KEYS, type LoopTrigger } from "../config-schema";
import { validateCron, validateTimeZone } from "../schedule";
import { isRecord, ON_HELP, suggest, type Problem } from "./shared";

/**
 * `on: { schedule: { cron, tz } }`: a five-field cron and an IANA time zone (Europe/Paris).
 * `onOk` is false when `on:` had another key beside schedule: (reported already): the schedule
 * is still checked, and no trigger comes of it.
 */
export function validateScheduleTrigger(L: string, schedule: unknown, onOk: boolean, problem: Problem): LoopTrigger | null {
  let ok = onOk;
  if (!isRecord(schedule)) {
    problem("config_invalid", ["on", "schedule"], `${L}: on: needs schedule: { cron: "...", tz: ... }; ${ON_HELP}.`);
    return null;
  }
  for (const key of Object.keys(schedule)) {
    if (!(SCHEDULE_KEYS as readonly string[]).includes(key)) {
      ok = false;
      problem("config_unknown_key", ["on", "schedule", key], `${L} has an unknown key "${key}" under schedule:${suggest(key, [...SCHEDULE_KEYS])}: the keys are cron and tz.`);
    }
  }
  const cron = schedule.cron;
  const tz = schedule.tz ?? DEFAULT_TIME_ZONE;
  const checked = [
    checkText(L, cron, validateCron, { token: "config_bad_cron", key: "cron" }, `${L} needs schedule.cron: five fields, minute hour day-of-month month day-of-week, quoted, e.g. cron: "0 6 * * 1-5".`),
    checkText(L, tz, validateTimeZone, { token: "config_bad_timezone", key: "tz" }, `${L}: schedule.tz must be an IANA time zone name such as Europe/Paris.`),
  ];
  for (const c of checked) if (c) problem(c.token, ["on", "schedule", c.key], c.message);
  if (checked.some(Boolean)) ok = false;
  if (!ok || typeof cron !== "string" || typeof tz !== "string") return null;
  return { kind: "schedule", cron: cron.trim().split(/\s+/).join(" "), tz, repositories: null };
}

interface ScheduleField {
  token: "config_bad_cron" | "config_bad_timezone";
  key: "cron" | "tz";
}

/** The problem of one text field of schedule: (`notText` when it is no text, else what `validate` says of it), or null. */
function checkText(L: string, value: unknown, validate: (text: string) => string | null, field: ScheduleField, notText: string): (ScheduleField & { message: string }) | null {
  if (typeof value !== "string") return { ...field, message: notText };
  const why = validate(value);
  return why ? { ...field, message: `${L}: ${why}` } : null;
}
