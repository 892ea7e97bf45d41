import { describe, expect, it } from "vitest";
import { daysOfMonth, monthKey, monthStart, parseMonthKey, resetAt } from "../../lib/metering/month";
import { refill, secondsUntilToken } from "../../lib/metering/rate-bucket";

describe("metering months are UTC calendar months", () => {
  it("keys a month by its UTC date, whatever the local offset of the instant", () => {
    expect(monthKey(new Date("2026-11-30T23:59:59.999Z"))).toBe("2026-11");
    expect(monthKey(new Date("2026-12-01T00:00:00.000Z"))).toBe("2026-12");
    // 00:30 on Dec 1 in Paris is still November in UTC
    expect(monthKey(new Date("2026-12-01T00:30:00+01:00"))).toBe("2026-11");
  });

  it("resets at the first instant of the next month, across a year end", () => {
    expect(resetAt(new Date("2026-11-15T12:00:00Z")).toISOString()).toBe("2026-12-01T00:00:00.000Z");
    expect(resetAt(new Date("2026-12-31T23:59:59Z")).toISOString()).toBe("2027-01-01T00:00:00.000Z");
    expect(monthStart(new Date("2027-02-28T10:00:00Z")).toISOString()).toBe("2027-02-01T00:00:00.000Z");
  });

  it("lists every day of a month and parses only real month keys", () => {
    expect(daysOfMonth(new Date("2028-02-10T00:00:00Z"))).toHaveLength(29);
    expect(daysOfMonth(new Date("2026-11-10T00:00:00Z"))[29]).toBe("2026-11-30");
    expect(parseMonthKey("2026-13")).toBeNull();
    expect(parseMonthKey("2026-1")).toBeNull();
    expect(parseMonthKey("2026-01")?.toISOString()).toBe("2026-01-01T00:00:00.000Z");
  });
});

describe("the open-rate token bucket", () => {
  it("refills at its rate per minute up to its size", () => {
    expect(refill(0, 30, 2)).toBe(1);
    expect(refill(0, 600, 2)).toBe(2);
    expect(refill(1.5, -5, 2)).toBe(1.5);
  });

  it("says how long until a whole token", () => {
    expect(secondsUntilToken(1, 6)).toBe(0);
    expect(secondsUntilToken(0, 6)).toBe(10);
    expect(secondsUntilToken(0.99, 60)).toBe(1);
  });
});
