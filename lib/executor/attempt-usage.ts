import type { AgentReport } from "./adapters/types";
import type { MeteredUsage } from "./agent-sandbox/usage-meter";
import type { NamedAgentSpec, TokenPrices } from "./agent-spec";
import type { AgentResult } from "./result-file";

/**
 * What an Attempt cost, and who says so. The gateway's reading of the model API's own answers
 * is the bill, priced from the roster: the agent cannot forge it. Everything the agent says of
 * itself (its CLI's `result` line, its result file) is a claim: with no reading to bill — or one
 * with answers the gateway could not read — the Attempt is billed the greatest of its claims,
 * the reading and minutes × price_per_minute_usd, so no line printed by any process of the
 * sandbox makes an Attempt cheaper than the time it took.
 */

export interface AttemptUsage {
  /** The whole Attempt, checkout to cleanup. */
  durationMs: number;
  /** The agent process alone (what an estimate is based on). */
  agentMs: number;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: number | null;
  /** The cost is minutes × price_per_minute_usd: the agent claimed less, or nothing. */
  costEstimated: boolean;
  /** The cost is the gateway's reading of the model API's answers, priced from the roster. */
  costExact: boolean;
  /** What the agent reported through its adapter; null when it reported nothing. */
  model: string | null;
  turns: number | null;
  /** The session the next Attempt may resume (Claude's session_id, Codex's thread_id). */
  sessionId: string | null;
}

const usd = (n: number) => Math.round(n * 1e6) / 1e6;

/** Tokens the gateway read, at the roster's prices per million (cache tokens as input when it names no cache price). */
export function meteredCost(metered: MeteredUsage, prices: TokenPrices): number {
  const input = metered.input * prices.input + metered.cacheRead * (prices.cacheRead ?? prices.input) + metered.cacheWrite * (prices.cacheWrite ?? prices.input);
  return usd((input + metered.output * prices.output) / 1_000_000);
}

const allInput = (m: MeteredUsage) => m.input + m.cacheRead + m.cacheWrite;

export function attemptUsage(
  agent: Pick<NamedAgentSpec, "price_per_minute_usd" | "token_prices">,
  durationMs: number,
  agentMs: number,
  result: AgentResult | null,
  report: AgentReport | null = null,
  metered: MeteredUsage | null = null,
): AttemptUsage {
  const reported = report?.usage ?? null;
  const facts = { model: metered?.model ?? reported?.model ?? null, turns: reported?.turns ?? null, sessionId: report?.sessionId ?? null };
  const tokens = metered
    ? { tokensIn: allInput(metered), tokensOut: metered.output }
    : { tokensIn: reported?.tokensIn ?? result?.tokens_in ?? null, tokensOut: reported?.tokensOut ?? result?.tokens_out ?? null };
  const read = metered && agent.token_prices ? meteredCost(metered, agent.token_prices) : null;
  if (read !== null && metered!.unread === 0) {
    return { durationMs, agentMs, ...tokens, costUsd: read, costEstimated: false, costExact: true, ...facts };
  }
  const claims = [read, reported?.costUsd, result?.cost_usd].filter((c): c is number => typeof c === "number" && Number.isFinite(c) && c >= 0);
  const claimed = claims.length > 0 ? Math.max(...claims) : null;
  const price = agent.price_per_minute_usd;
  const estimate = price !== undefined && price >= 0 ? usd((agentMs / 60_000) * price) : null;
  const useEstimate = estimate !== null && (claimed === null || claimed < estimate);
  return { durationMs, agentMs, ...tokens, costUsd: useEstimate ? estimate : claimed, costEstimated: useEstimate, costExact: false, ...facts };
}

/** The transcript's line on the gateway's reading, beside what the agent said of itself (the cross-check). */
export function meteringNote(metered: MeteredUsage, usage: AttemptUsage, report: AgentReport | null): string {
  const n = metered.requests;
  const cost = usage.costExact && usage.costUsd !== null ? ` = $${usage.costUsd} at the roster's prices` : "";
  let note = `the gateway read ${n} model answer${n === 1 ? "" : "s"}: ${allInput(metered)} tokens in (${metered.cacheRead} from cache), ${metered.output} out${cost}`;
  if (metered.unread > 0) {
    note += `; ${metered.unread} answer${metered.unread === 1 ? "" : "s"} carried no usage it could read, so the Attempt is billed the greatest of the reading, the agent's claims and its minutes × price`;
  }
  const claim = report?.usage;
  if (claim) {
    const cost = claim.costUsd !== null ? `$${usd(claim.costUsd)}, ` : "";
    const differs = claim.tokensOut !== metered.output ? " (not what the gateway read: its reading is billed)" : "";
    note += `; the agent reported ${cost}${claim.tokensOut} tokens out${differs}`;
  }
  return note;
}
