import { describe, expect, it } from "vitest";
import type { AgentReport } from "../../lib/executor/adapters/types";
import type { MeteredUsage } from "../../lib/executor/agent-sandbox/usage-meter";
import { attemptUsage, meteredCost, meteringNote } from "../../lib/executor/attempt-usage";

const PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: null };
const reading = (over: Partial<MeteredUsage> = {}): MeteredUsage => ({ requests: 2, unread: 0, input: 1_000, cacheRead: 2_000, cacheWrite: 500, output: 100, model: "claude-sonnet-4-5", ...over });
const claim = (costUsd: number | null, tokensOut = 100): AgentReport => ({
  sessionId: "5f0c7a4e-1b2c-4d3e-8f9a-0123456789ab",
  finalText: "done",
  failure: null,
  usage: { tokensIn: 1, tokensOut, cacheRead: 0, cacheWrite: 0, costUsd, costExact: costUsd !== null, costSource: costUsd === null ? null : "agent", turns: 2, durationMs: null, model: "claimed-model" },
});

describe("what an Attempt is billed", () => {
  it("the gateway's reading at the roster's prices, whatever the agent claims; cache write at the input price without its own", () => {
    expect(meteredCost(reading(), PRICES)).toBe((1_000 * 3 + 2_000 * 0.3 + 500 * 3 + 100 * 15) / 1e6);
    const usage = attemptUsage({ token_prices: PRICES, price_per_minute_usd: 60 }, 5_000, 120_000, { cost_usd: 0 }, claim(0), reading());
    expect(usage).toMatchObject({ costUsd: 0.0066, costExact: true, costEstimated: false, tokensIn: 3_500, tokensOut: 100, model: "claude-sonnet-4-5", turns: 2 });
  });

  it("with answers the gateway could not read, the greatest of the reading, the claims and minutes × price", () => {
    const low = attemptUsage({ token_prices: PRICES, price_per_minute_usd: 1 }, 0, 60_000, null, claim(0), reading({ unread: 1 }));
    expect(low).toMatchObject({ costUsd: 1, costEstimated: true, costExact: false });
    const high = attemptUsage({ token_prices: PRICES }, 0, 60_000, null, claim(5), reading({ unread: 1 }));
    expect(high).toMatchObject({ costUsd: 5, costEstimated: false, costExact: false });
  });

  it("with no reading, the greatest of every claim and minutes × price; a claim is never exact", () => {
    expect(attemptUsage({ price_per_minute_usd: 6 }, 0, 30_000, { cost_usd: 0 }, claim(0))).toMatchObject({ costUsd: 3, costEstimated: true, costExact: false });
    expect(attemptUsage({ price_per_minute_usd: 6 }, 0, 30_000, { cost_usd: 9 }, claim(4))).toMatchObject({ costUsd: 9, costEstimated: false, costExact: false });
    expect(attemptUsage({}, 0, 30_000, null, claim(0.5))).toMatchObject({ costUsd: 0.5, costEstimated: false, costExact: false });
    expect(attemptUsage({}, 0, 30_000, null, null)).toMatchObject({ costUsd: null, costEstimated: false });
  });

  it("the transcript says the reading beside the agent's claim, and when they differ", () => {
    const metered = reading();
    const usage = attemptUsage({ token_prices: PRICES }, 0, 0, null, claim(0.1, 7), metered);
    expect(meteringNote(metered, usage, claim(0.1, 7))).toBe(
      "the gateway read 2 model answers: 3500 tokens in (2000 from cache), 100 out = $0.0066 at the roster's prices; the agent reported $0.1, 7 tokens out (not what the gateway read: its reading is billed)",
    );
  });
});
