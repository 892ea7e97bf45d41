import type { AgentSpec } from "../config/roster";
import type { NamedAgentSpec } from "../executor/agent-spec";

/** The roster's Agent in the shape the executor takes. */
export function executorAgent(agent: AgentSpec): NamedAgentSpec {
  return {
    name: agent.name,
    command: agent.command,
    // unlimited (null): no limit is passed, so the executor sets no timer
    ...(agent.maxAttemptMinutes !== null ? { max_attempt_minutes: agent.maxAttemptMinutes } : {}),
    secrets: agent.secrets,
    ...(agent.modelApi ? { model_api: agent.modelApi } : {}),
    apis: agent.apis,
    ...(agent.pricePerMillionInputUsd !== null && agent.pricePerMillionOutputUsd !== null
      ? {
          token_prices: {
            input: agent.pricePerMillionInputUsd,
            output: agent.pricePerMillionOutputUsd,
            cacheRead: agent.pricePerMillionCacheReadUsd,
            cacheWrite: agent.pricePerMillionCacheWriteUsd,
          },
        }
      : {}),
    intervene: agent.intervene,
    egress: agent.egress,
    limits: agent.limits,
    read_only_paths: agent.readOnlyPaths,
    adapter: agent,
    ...(agent.pricePerMinuteUsd !== null ? { price_per_minute_usd: agent.pricePerMinuteUsd } : {}),
  };
}
