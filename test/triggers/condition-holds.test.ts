import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopConditionHolds } from "../../lib/triggers/condition-holds";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, startFixture, type Fixture } from "../github/support/fixture";

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(() => fx.close());

const LABEL = "ready-for-agent";

describe("a queued Event's turn: does the Loop's if: still hold on a fresh read?", () => {
  it("follows GitHub's current state of the Item, not the stored projection", async () => {
    const { fullName } = await installRepository(fx, { owner: "cond-a", name: "app" });
    await pollRepository(fx.deps, fullName);
    const issue = fx.sim.createIssue({ repo: fullName, title: "Fix it", labels: [LABEL] });
    const subject = { loop: "start-dev", repo: fullName, number: issue.number };
    expect(await loopConditionHolds(fx.deps, subject)).toBe(true);
    fx.sim.removeLabel({ repo: fullName, number: issue.number, label: LABEL }); // no poll in between
    expect(await loopConditionHolds(fx.deps, subject)).toBe(false);
  });

  it("counts a Tick as holding, and a Loop gone from the config or an unknown Item as not", async () => {
    const { fullName } = await installRepository(fx, { owner: "cond-b", name: "app" });
    await pollRepository(fx.deps, fullName);
    expect(await loopConditionHolds(fx.deps, { loop: "nightly", repo: fullName, number: null })).toBe(true);
    expect(await loopConditionHolds(fx.deps, { loop: "no-such-loop", repo: fullName, number: 1 })).toBe(false);
    expect(await loopConditionHolds(fx.deps, { loop: "start-dev", repo: fullName, number: 999 })).toBe(false);
  });
});
