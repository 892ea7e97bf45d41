import { describe, expect, it } from "vitest";
import { conditionHolds } from "../../lib/runner/continue-with-newest";

/**
 * Before an Event queued behind a Run opens its own, the Loop's `if:` is asked again. A check
 * that fails or does not answer counts as true: the worst case is a Run the next poll revokes,
 * never a queued Event silently dropped.
 */

const subject = { loop: "start-dev", repo: "acme/widgets", number: 7, itemKey: "acme/widgets#7" };

describe("the re-check of a queued Event's condition", () => {
  it("is its answer when it answers", async () => {
    expect(await conditionHolds({ recheckCondition: async () => false }, subject)).toBe(false);
    expect(await conditionHolds({ recheckCondition: async () => true }, subject)).toBe(true);
  });

  it("counts as true when it fails", async () => {
    const recheckCondition = async (): Promise<boolean> => {
      throw new Error("GitHub answered 502");
    };
    expect(await conditionHolds({ recheckCondition }, subject)).toBe(true);
  });

  it("counts as true when it does not answer in time", async () => {
    const never = () => new Promise<boolean>(() => undefined);
    expect(await conditionHolds({ recheckCondition: never, recheckTimeoutMs: 50 }, subject)).toBe(true);
  });
});
