import { describe, expect, it } from "vitest";
import { parseInstanceConfig } from "../../lib/config/roster";
import { parseRepositoryConfig } from "../../lib/loops/parse-config";
import { itemEvent } from "../../lib/triggers/evaluate-item";
import { tickEvent } from "../../lib/triggers/fire-schedule";
import type { Observation } from "../../lib/triggers/observe-item";

/** A Loop's `environment:` travels in its Event's submission, as the Attempt will read it. */

const roster = parseInstanceConfig("agents:\n  claude: { command: [claude, -p] }\n", "r.yml");
const { loops, errors } = parseRepositoryConfig(
  `environment: { setup: npm ci, verify: npm test }
loops:
  start-dev: { on: issues, agent: claude, prompt: go }
  nightly: { on: { schedule: { cron: "0 6 * * *" } }, agent: claude, prompt: go, environment: { env: { CI_SHARD: 2 } } }
`,
  { roster },
);
const repo = { fullName: "Acme/Api", private: true };

describe("the Event's submission", () => {
  it("carries the Loop's environment, for an Item and for a Tick", () => {
    expect(errors).toEqual([]);
    const item = { key: "acme/api#3", repo: "acme/api", number: 3, hash: "h", readAt: new Date() } as unknown as Observation;
    expect(itemEvent(repo, loops[0]!, item, 0, "go").submission.environment).toEqual({ setup: "npm ci", cache: null, key: null, verify: "npm test", onVerifyFailure: null, maxVerifyRounds: null, env: {}, toolchains: [] });
    expect(tickEvent(loops[1]!, repo, new Date("2026-12-06T06:00:00Z"), "go").submission.environment).toEqual({
      setup: "npm ci",
      cache: null,
      key: null,
      verify: "npm test",
      onVerifyFailure: null,
      maxVerifyRounds: null,
      env: { CI_SHARD: "2" },
      toolchains: [],
    });
  });
});
