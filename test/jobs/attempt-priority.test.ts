import { describe, expect, it } from "vitest";
import { attemptPriority } from "../../jobs/processors/attempt-priority";

describe("the order of queued Attempts across workers (their BullMQ priority)", () => {
  it("follows the Event's receipt for decades, not only until late 2029", () => {
    const receipts = ["2026-01-01T00:20:00Z", "2029-10-01T00:00:00Z", "2029-12-31T23:00:00Z", "2030-06-01T00:00:00Z", "2045-01-01T00:00:00Z", "2084-12-31T00:00:00Z"];
    const priorities = receipts.map((at) => attemptPriority(new Date(at)));
    for (const [i, p] of priorities.entries()) {
      expect(p).toBeGreaterThanOrEqual(1);
      expect(p).toBeLessThanOrEqual(2_097_151); // BullMQ's highest priority number
      if (i > 0) expect(p, receipts[i]).toBeGreaterThan(priorities[i - 1]!);
    }
  });

  it("gives one quarter hour one priority (arrival order within it), and a job with no receipt the lowest", () => {
    expect(attemptPriority(new Date("2031-03-04T10:01:00Z"))).toBe(attemptPriority(new Date("2031-03-04T10:14:59Z")));
    expect(attemptPriority(new Date("2031-03-04T10:15:00Z"))).toBe(attemptPriority(new Date("2031-03-04T10:14:59Z")) + 1);
    expect(attemptPriority(new Date("2020-01-01T00:00:00Z"))).toBe(1);
    expect(attemptPriority(undefined)).toBe(2_097_151);
  });
});
