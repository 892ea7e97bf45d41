import { describe, expect, it } from "vitest";
import { chartScale, counted, formatCount, formatDurationMs, formatMinutes, formatUsd, formatUsdExact, niceCeil, relativeTime } from "../../lib/dashboard/format";

describe("formatUsd", () => {
  it("keeps a cost below a cent (never $0.00 for $0.0004)", () => {
    expect(formatUsd(0.0004)).toBe("$0.0004");
    expect(formatUsd(0.00042)).toBe("$0.00042");
    expect(formatUsd(0.000001)).toBe("$0.000001");
    expect(formatUsd(0.009)).toBe("$0.009");
    expect(formatUsd(0.0099999)).toBe("$0.01");
  });
  it("writes cents from a cent up, grouped", () => {
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(0.01)).toBe("$0.01");
    expect(formatUsd(4.85)).toBe("$4.85");
    expect(formatUsd(1234.5)).toBe("$1,234.50");
  });
  it("says a cost below the micro-dollar it is kept to as such, and a refund with its sign", () => {
    expect(formatUsd(0.0000004)).toBe("< $0.000001");
    expect(formatUsd(-0.0004)).toBe("-$0.0004");
    expect(formatUsd(Number.NaN)).toBe("$0.00");
  });
});

describe("formatUsdExact", () => {
  it("gives one Attempt's cost to the hundredth of a cent, and keeps the digits below a cent", () => {
    expect(formatUsdExact(0.4012)).toBe("$0.4012");
    expect(formatUsdExact(12)).toBe("$12.0000");
    expect(formatUsdExact(0.00004)).toBe("$0.00004");
    expect(formatUsdExact(0)).toBe("$0.00");
  });
});

describe("formatMinutes and formatDurationMs", () => {
  it("says seconds where minutes would round to 0.0", () => {
    expect(formatMinutes(3 / 60)).toBe("3 s");
    expect(formatMinutes(0.4 / 60)).toBe("0.4 s");
    expect(formatMinutes(42 / 60)).toBe("42 s");
    expect(formatMinutes(0)).toBe("0 s");
  });
  it("says minutes under an hour, hours above", () => {
    expect(formatMinutes(1)).toBe("1 min");
    expect(formatMinutes(2.5)).toBe("2.5 min");
    expect(formatMinutes(59.4)).toBe("59 min");
    expect(formatMinutes(59.9)).toBe("1 h");
    expect(formatMinutes(90)).toBe("1.5 h");
  });
  it("says an unknown duration as a dash", () => {
    expect(formatDurationMs(null)).toBe("—");
    expect(formatDurationMs(3_000)).toBe("3 s");
    expect(formatDurationMs(-5)).toBe("0 s");
  });
});

describe("formatCount and counted", () => {
  it("groups whole numbers and keeps one decimal of a rate", () => {
    expect(formatCount(1234)).toBe("1,234");
    expect(formatCount(0.25)).toBe("0.3");
    expect(formatCount(2.0000001)).toBe("2");
  });
  it("names what it counts, singular or plural", () => {
    expect(counted(1, "Run")).toBe("1 Run");
    expect(counted(6, "Run")).toBe("6 Runs");
    expect(counted(0, "Attempt")).toBe("0 Attempts");
  });
});

describe("chartScale", () => {
  const labels = (values: number[], f: (n: number) => string) => chartScale(values, f).ticks.map((t) => t.label);
  it("gives sub-cent costs distinct ticks (never $0.00 / $0.00 / $0.00)", () => {
    expect(labels([0.0004, 0.0001], formatUsd)).toEqual(["$0.00", "$0.00025", "$0.0005"]);
    expect(labels([0.003], formatUsd)).toEqual(["$0.00", "$0.0025", "$0.005"]);
  });
  it("gives seconds of agent time ticks in seconds", () => {
    expect(labels([3 / 60], formatMinutes)).toEqual(["0 s", "1.5 s", "3 s"]);
  });
  it("drops a tick whose label another has", () => {
    expect(labels([1], (n) => String(Math.round(n)))).toEqual(["0", "1"]);
  });
  it("an empty chart has the one tick 0", () => {
    expect(chartScale([0, 0], formatUsd)).toEqual({ max: 1, ticks: [{ value: 0, label: "$0.00" }] });
    expect(chartScale([], formatCount).ticks).toEqual([{ value: 0, label: "0" }]);
  });
  it("its top is a round number at or above the largest value", () => {
    expect(niceCeil(0.0004)).toBe(0.0005);
    expect(niceCeil(0.0001)).toBe(0.0001);
    expect(niceCeil(3)).toBe(5);
    expect(niceCeil(7)).toBe(10);
    expect(niceCeil(200)).toBe(200);
  });
});

describe("relativeTime", () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  it("says how long ago", () => {
    expect(relativeTime(now - 2_000, now)).toBe("just now");
    expect(relativeTime(now + 60_000, now)).toBe("just now");
    expect(relativeTime(now - 42_000, now)).toBe("42 s ago");
    expect(relativeTime(now - 5 * 60_000, now)).toBe("5 min ago");
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe("3 h ago");
    expect(relativeTime(now - 2 * 86_400_000, now)).toBe("2 d ago");
    expect(relativeTime(now - 40 * 86_400_000, now)).toBe("2026-10-22");
  });
});
