import { describe, expect, it } from "vitest";
import { BadInputError } from "../../lib/errors";
import {
  latestTickAtOrBefore,
  localIso,
  nextTickAfter,
  validateCron,
  validateTimeZone,
} from "../../lib/loops/schedule";

const PARIS = "Europe/Paris";
const iso = (d: Date | null) => d?.toISOString() ?? null;
const at = (s: string) => new Date(s);

/** Every Tick in [from, to], by walking nextTickAfter. */
function ticks(cron: string, tz: string, from: string, to: string): string[] {
  const out: string[] = [];
  let t = new Date(at(from).getTime() - 1);
  for (;;) {
    const next = nextTickAfter(cron, tz, t);
    if (!next || next > at(to)) return out;
    out.push(next.toISOString());
    t = next;
  }
}

describe("validateCron", () => {
  it.each([
    "0 6 * * 1-5",
    "30 2 * * *",
    "*/15 * * * *",
    "0 0 1 1 *",
    "0 9 * JAN,jul MON-FRI",
    "5,35 8-18/2 * * 0",
    "0 6 * * 7",
    "  0   6 * * *  ",
  ])("accepts %j", (cron) => {
    expect(validateCron(cron)).toBeNull();
  });

  it.each([
    ["", "empty"],
    ["   ", "empty"],
    ["* * *", "has 3 fields; write exactly five"],
    ["0 6 * * 1-5 2026", "has 6 fields"],
    ["0 0 6 * * *", "has 6 fields"],
    ["@daily", "has 1 field;"],
    ["61 * * * *", "the value 61 is outside the range 0-59"],
    ["0 24 * * *", "the value 24 is outside the range 0-23"],
    ["0 6 32 * *", "outside the range 1-31"],
    ["0 6 * 13 *", "outside the range 1-12"],
    ["0 0 30 2 *", "never occurs"],
    ["H 6 * * *", 'The minute field "H"'],
    ["0 6 L * *", 'The day-of-month field "L"'],
    ["0 6 ? * *", 'The day-of-month field "?"'],
    ["0 6 * * 1#2", 'The day-of-week field "1#2"'],
    ["0 6 * * funday", 'The day-of-week field "funday"'],
  ])("refuses %j with a sentence (%s)", (cron, fragment) => {
    const message = validateCron(cron);
    expect(message).toContain(fragment);
    expect(message).toMatch(/\.$/);
  });
});

describe("validateTimeZone", () => {
  it.each(["Europe/Paris", "UTC", "Etc/UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"])(
    "accepts %s",
    (tz) => expect(validateTimeZone(tz)).toBeNull(),
  );
  it.each([
    ["Mars/Olympus", '"Mars/Olympus" is not a time zone'],
    ["+02:00", '"+02:00" is not a time zone'],
    ["Paris", '"Paris" is not a time zone'],
    ["", "The time zone is empty"],
  ])("refuses %j", (tz, fragment) => {
    expect(validateTimeZone(tz)).toContain(fragment);
  });
});

describe("localIso", () => {
  it.each([
    ["2026-01-15T05:00:00.000Z", PARIS, "2026-01-15T06:00:00+01:00"],
    ["2026-07-15T04:00:00.000Z", PARIS, "2026-07-15T06:00:00+02:00"],
    ["2026-03-29T01:30:00.000Z", PARIS, "2026-03-29T03:30:00+02:00"],
    ["2026-10-25T00:30:00.000Z", PARIS, "2026-10-25T02:30:00+02:00"],
    ["2026-10-25T01:30:00.000Z", PARIS, "2026-10-25T02:30:00+01:00"],
    ["2026-12-31T23:59:59.000Z", PARIS, "2027-01-01T00:59:59+01:00"],
    ["2026-05-01T12:00:00.000Z", "UTC", "2026-05-01T12:00:00+00:00"],
    ["2026-05-01T12:00:00.000Z", "Asia/Kolkata", "2026-05-01T17:30:00+05:30"],
    ["2026-01-10T12:00:00.000Z", "America/St_Johns", "2026-01-10T08:30:00-03:30"],
    ["2026-07-10T12:00:00.000Z", "America/New_York", "2026-07-10T08:00:00-04:00"],
    ["2026-01-01T00:00:00.000Z", "Pacific/Kiritimati", "2026-01-01T14:00:00+14:00"],
    ["2026-01-01T00:00:00.750Z", "UTC", "2026-01-01T00:00:00+00:00"],
  ])("%s in %s is %s", (instant, tz, expected) => {
    expect(localIso(at(instant), tz)).toBe(expected);
  });
});

describe("latestTickAtOrBefore and nextTickAfter", () => {
  it("count a Tick that is exactly now as at-or-before, and not as after", () => {
    expect(iso(latestTickAtOrBefore("0 6 * * *", "UTC", at("2026-01-01T06:00:00.000Z")))).toBe("2026-01-01T06:00:00.000Z");
    expect(iso(latestTickAtOrBefore("0 6 * * *", "UTC", at("2026-01-01T05:59:59.999Z")))).toBe("2025-12-31T06:00:00.000Z");
    expect(iso(latestTickAtOrBefore("0 6 * * *", "UTC", at("2026-01-01T06:00:00.001Z")))).toBe("2026-01-01T06:00:00.000Z");
    expect(iso(nextTickAfter("0 6 * * *", "UTC", at("2026-01-01T06:00:00.000Z")))).toBe("2026-01-02T06:00:00.000Z");
    expect(iso(nextTickAfter("0 6 * * *", "UTC", at("2026-01-01T05:59:59.999Z")))).toBe("2026-01-01T06:00:00.000Z");
  });

  it("every minute", () => {
    expect(iso(latestTickAtOrBefore("* * * * *", "UTC", at("2026-02-03T10:11:12.345Z")))).toBe("2026-02-03T10:11:00.000Z");
    expect(iso(nextTickAfter("* * * * *", "UTC", at("2026-02-03T10:11:12.345Z")))).toBe("2026-02-03T10:12:00.000Z");
  });

  it('"0 6 * * 1-5" in Paris fires on weekdays at 06:00 local, across the spring change', () => {
    const got = ticks("0 6 * * 1-5", PARIS, "2026-03-26T00:00:00Z", "2026-04-01T00:00:00Z");
    expect(got).toEqual([
      "2026-03-26T05:00:00.000Z", // Thu 06:00 CET
      "2026-03-27T05:00:00.000Z", // Fri
      "2026-03-30T04:00:00.000Z", // Mon 06:00 CEST
      "2026-03-31T04:00:00.000Z", // Tue
    ]);
    expect(got.map((t) => localIso(at(t), PARIS).slice(11))).toEqual([
      "06:00:00+01:00",
      "06:00:00+01:00",
      "06:00:00+02:00",
      "06:00:00+02:00",
    ]);
    // Over the weekend the latest Tick is Friday's.
    expect(iso(latestTickAtOrBefore("0 6 * * 1-5", PARIS, at("2026-03-29T12:00:00Z")))).toBe("2026-03-27T05:00:00.000Z");
    expect(iso(nextTickAfter("0 6 * * 1-5", PARIS, at("2026-03-28T09:00:00Z")))).toBe("2026-03-30T04:00:00.000Z");
  });

  it('"30 2 * * *" in Paris fires once the night 02:30 does not exist (2026-03-29), at 03:30 CEST', () => {
    const got = ticks("30 2 * * *", PARIS, "2026-03-27T00:00:00Z", "2026-03-31T00:00:00Z");
    expect(got).toEqual([
      "2026-03-27T01:30:00.000Z",
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
    expect(got.map((t) => localIso(at(t), PARIS))).toEqual([
      "2026-03-27T02:30:00+01:00",
      "2026-03-28T02:30:00+01:00",
      "2026-03-29T03:30:00+02:00",
      "2026-03-30T02:30:00+02:00",
    ]);
    expect(iso(latestTickAtOrBefore("30 2 * * *", PARIS, at("2026-03-29T01:29:59Z")))).toBe("2026-03-28T01:30:00.000Z");
    expect(iso(latestTickAtOrBefore("30 2 * * *", PARIS, at("2026-03-29T01:30:00Z")))).toBe("2026-03-29T01:30:00.000Z");
    expect(iso(latestTickAtOrBefore("30 2 * * *", PARIS, at("2026-03-29T12:00:00Z")))).toBe("2026-03-29T01:30:00.000Z");
    // Asked from inside the gap (03:10 CEST), the next Tick is still that night's shifted one.
    expect(iso(nextTickAfter("30 2 * * *", PARIS, at("2026-03-29T01:10:00Z")))).toBe("2026-03-29T01:30:00.000Z");
  });

  it('"30 2 * * *" in Paris fires only at the first 02:30 the night the clocks go back (2026-10-25)', () => {
    const got = ticks("30 2 * * *", PARIS, "2026-10-23T00:00:00Z", "2026-10-27T00:00:00Z");
    expect(got).toEqual([
      "2026-10-23T00:30:00.000Z",
      "2026-10-24T00:30:00.000Z",
      "2026-10-25T00:30:00.000Z", // 02:30 CEST
      "2026-10-26T01:30:00.000Z", // 02:30 CET the next day
    ]);
    // The second 02:30 (CET, 01:30Z) is not a Tick, asked from any side.
    expect(iso(latestTickAtOrBefore("30 2 * * *", PARIS, at("2026-10-25T01:30:00Z")))).toBe("2026-10-25T00:30:00.000Z");
    expect(iso(latestTickAtOrBefore("30 2 * * *", PARIS, at("2026-10-25T23:00:00Z")))).toBe("2026-10-25T00:30:00.000Z");
    expect(iso(nextTickAfter("30 2 * * *", PARIS, at("2026-10-25T01:00:00Z")))).toBe("2026-10-26T01:30:00.000Z");
    expect(iso(nextTickAfter("30 2 * * *", PARIS, at("2026-10-25T00:30:00Z")))).toBe("2026-10-26T01:30:00.000Z");
  });

  it('"*/30 * * * *" in Paris skips the repeated half hours when the clocks go back', () => {
    const got = ticks("*/30 * * * *", PARIS, "2026-10-24T23:30:00Z", "2026-10-25T03:00:00Z");
    expect(got.map((t) => localIso(at(t), PARIS).slice(11))).toEqual([
      "01:30:00+02:00",
      "02:00:00+02:00",
      "02:30:00+02:00",
      "03:00:00+01:00",
      "03:30:00+01:00",
      "04:00:00+01:00",
    ]);
  });

  it('"*/20 2 * * *" in Paris shifts the whole nonexistent hour forward once', () => {
    const got = ticks("*/20 2 * * *", PARIS, "2026-03-29T00:00:00Z", "2026-03-29T23:00:00Z");
    expect(got.map((t) => localIso(at(t), PARIS).slice(11))).toEqual(["03:00:00+02:00", "03:20:00+02:00", "03:40:00+02:00"]);
  });

  it("Lord Howe's 30-minute change: the repeated half hour fires once", () => {
    // 2026-04-05 02:00 (+11:00) becomes 01:30 (+10:30): 01:30..01:59 happen twice.
    const tz = "Australia/Lord_Howe";
    const got = ticks("0,30 1,2 * * *", tz, "2026-04-04T13:00:00Z", "2026-04-04T17:00:00Z");
    expect(got.map((t) => localIso(at(t), tz))).toEqual([
      "2026-04-05T01:00:00+11:00",
      "2026-04-05T01:30:00+11:00",
      "2026-04-05T02:00:00+10:30",
      "2026-04-05T02:30:00+10:30",
    ]);
  });

  it.each([
    ["30 2 * * *", PARIS, "2026-03-27T00:00:00Z", "2026-03-31T00:00:00Z"],
    ["30 2 * * *", PARIS, "2026-10-23T00:00:00Z", "2026-10-27T00:00:00Z"],
    ["0 2 * * *", PARIS, "2026-03-28T00:00:00Z", "2026-03-30T00:00:00Z"],
    ["*/30 * * * *", PARIS, "2026-10-24T22:00:00Z", "2026-10-25T04:00:00Z"],
    ["*/20 2 * * *", PARIS, "2026-03-28T00:00:00Z", "2026-03-30T06:00:00Z"],
    ["15 1-3 * * *", "America/New_York", "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z"],
    ["15 1-3 * * *", "America/New_York", "2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z"],
    ["0,30 2 * * *", "Australia/Lord_Howe", "2026-04-03T00:00:00Z", "2026-04-06T00:00:00Z"],
    ["0,30 1,2 * * *", "Australia/Lord_Howe", "2026-04-03T00:00:00Z", "2026-04-06T00:00:00Z"],
    ["0,30 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-05T00:00:00Z"],
    ["*/15 * * * *", "UTC", "2026-10-24T00:00:00Z", "2026-10-24T06:00:00Z"],
    ["0 6 * * 1-5", PARIS, "2026-03-20T00:00:00Z", "2026-04-05T00:00:00Z"],
  ])("%s in %s: both functions see the same Ticks, and no wall time twice (%s..%s)", (cron, tz, from, to) => {
    const all = ticks(cron, tz, from, to);
    expect(all.length).toBeGreaterThan(0);
    const walls = all.map((t) => localIso(at(t), tz).slice(0, 19));
    expect(new Set(walls).size).toBe(walls.length);
    const start = at(all[0]!).getTime();
    for (let ms = start; ms <= at(to).getTime(); ms += 7 * 60_000) {
      const expected = all.filter((t) => at(t).getTime() <= ms).pop() ?? null;
      expect(iso(latestTickAtOrBefore(cron, tz, new Date(ms))), new Date(ms).toISOString()).toBe(expected);
    }
  });

  it("refuses a bad cron or time zone with a typed error", () => {
    expect(() => latestTickAtOrBefore("61 * * * *", "UTC", new Date())).toThrow(BadInputError);
    try {
      nextTickAfter("0 6 * * *", "Mars/Olympus", new Date());
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(BadInputError);
      expect((err as BadInputError).token).toBe("config_bad_timezone");
    }
    try {
      nextTickAfter("0 6 * *", "UTC", new Date());
      expect.unreachable();
    } catch (err) {
      expect((err as BadInputError).token).toBe("config_bad_cron");
      expect((err as BadInputError).status).toBe(400);
    }
  });

  it("a yearly schedule looks back a year", () => {
    expect(iso(latestTickAtOrBefore("0 0 1 1 *", PARIS, at("2026-06-01T00:00:00Z")))).toBe("2025-12-31T23:00:00.000Z");
    expect(iso(nextTickAfter("0 0 1 1 *", PARIS, at("2026-06-01T00:00:00Z")))).toBe("2026-12-31T23:00:00.000Z");
  });
});
