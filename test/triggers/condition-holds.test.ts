import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { itemKey } from "../../lib/engine/ids";
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

  it("reads item.actor_permission from the queued Event, and refuses the App's own Item to a Loop that does not allow it", async () => {
    const { fullName } = await installRepository(fx, {
      owner: "cond-c",
      name: "app",
      config: `loops:
  writers-only:
    on: issues
    if: item.actor_permission == 'admin'
    agent: demo
    prompt: Go
  prs:
    on: pull_requests
    agent: demo
    prompt: Review
`,
    });
    await pollRepository(fx.deps, fullName);
    const issue = fx.sim.createIssue({ repo: fullName, title: "Queued" });
    const key = itemKey(fullName, issue.number);
    const subject = { loop: "writers-only", repo: fullName, number: issue.number, itemKey: key };
    expect(await loopConditionHolds(fx.deps, subject)).toBe(false); // no Event recorded: no actor
    await fx.db.pool.query(
      `INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, submission)
       VALUES ($1, 'item', 'writers-only', $2, $3, $4, 'h', 0, 'Queued', $5)`,
      [`queued-${fullName}`, fullName, key, issue.number, JSON.stringify({ prompt: "Go", agent: "demo", approvalRequired: false, maxCycles: 3, actor: { login: "octo", permission: "admin", source: "timeline" } })],
    );
    expect(await loopConditionHolds(fx.deps, subject)).toBe(true);

    const bot = fx.sim.state.botUser.login;
    const own = await fx.sim.openPullRequest({ login: bot, repo: fullName, head: "atelier/prs/1", title: "The App's" });
    expect(await loopConditionHolds(fx.deps, { loop: "prs", repo: fullName, number: own.number })).toBe(false);
  });
});
