import { afterAll, describe, expect, it } from "vitest";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { recordAndClaim } from "../../lib/store/runs/claim";
import { tickEvent } from "../../lib/triggers/fire-schedule";
import { beginAttempt } from "../support/attempts";
import { testDb, uniqueRepo } from "../support/db";

/**
 * A schedule Loop has no cycle budget: its Ticks are not an Item's cycles, so even a Loop that
 * says `max_cycles: 1` opens a Run on every Tick, each finished one counting for nothing.
 */

const db = testDb(2);
afterAll(() => db.close());

const usage = { durationMs: 10, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false };
const config = parseRepositoryConfig(
  `loops:
  nightly:
    on: { schedule: { cron: "0 6 * * *" } }
    agent: demo
    max_cycles: 1
    prompt: Triage
`,
  { roster: defaultInstanceConfig() },
);

describe("a schedule Loop's Ticks", () => {
  it("each open a Run, however many finished before, whatever max_cycles says", async () => {
    expect(config.errors).toEqual([]);
    const loop = config.loops[0]!;
    const repo = uniqueRepo("tick-budget");
    for (let day = 1; day <= 3; day++) {
      const event = tickEvent(loop, { fullName: repo, private: true }, new Date(`2026-12-0${day}T06:00:00Z`), "Triage");
      const claim = await recordAndClaim(db, event);
      expect(claim).toMatchObject({ tag: "Claimed", opened: true });
      if (claim.tag !== "Claimed") return;
      const begun = await beginAttempt(db, claim.runId, { token: `tick-${day}`, workerId: "w1" });
      if (begun.tag !== "Started") throw new Error("expected an Attempt");
      await finishAttempt(db, begun.attempt, { tag: "Succeeded", summary: null, usage, branch: null, pullRequestNumber: null, headSha: null });
    }
  });
});
