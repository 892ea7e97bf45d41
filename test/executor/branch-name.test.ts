import { describe, expect, it } from "vitest";
import { runBranch } from "../../lib/executor/branch-name";

describe("runBranch", () => {
  it("names an Item's branch after the Loop and number", () => {
    expect(runBranch("start-dev", { number: 42 })).toBe("atelier/start-dev/42");
  });

  it("names a Tick's branch after its scheduled time", () => {
    expect(runBranch("nightly-triage", { scheduledAt: new Date("2025-03-04T06:00:00.000Z") })).toBe(
      "atelier/nightly-triage/tick-20250304T060000Z",
    );
  });

  it("keeps a Loop name a valid ref component", () => {
    expect(runBranch("my loop..x.lock", { number: 1 })).toBe("atelier/my-loop.x-lock/1");
  });
});
