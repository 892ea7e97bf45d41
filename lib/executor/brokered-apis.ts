import type { BrokeredApi } from "./agent-sandbox/api-broker";
import { PLACEHOLDER_KEY } from "./agent-sandbox/api-broker";
import type { ApiProtocol } from "./agent-sandbox/usage-meter";
import type { AgentSpec } from "./agent-spec";

/**
 * The APIs an agent reaches through the gateway, which holds their credentials: its model API
 * first, then its tools'. What the gateway adds for each, and what the agent is told instead.
 */

interface ProtocolFacts {
  header: string;
  scheme: string | null;
  /** The variable a client of this API reads its base URL from. */
  baseUrlEnv: string;
  /** The variable it reads its key from: the agent gets a placeholder there. */
  keyEnv: string;
}

export const MODEL_API_PROTOCOLS: Readonly<Record<ApiProtocol, ProtocolFacts>> = Object.freeze({
  anthropic: { header: "x-api-key", scheme: null, baseUrlEnv: "ANTHROPIC_BASE_URL", keyEnv: "ANTHROPIC_API_KEY" },
  openai: { header: "authorization", scheme: "Bearer", baseUrlEnv: "OPENAI_BASE_URL", keyEnv: "OPENAI_API_KEY" },
});

/** Variables that hold a model key for the CLIs Atelier knows: never handed to an agent. */
export const MODEL_KEY_NAMES: readonly string[] = Object.freeze([
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "OPENAI_API_KEY",
  "CODEX_API_KEY",
]);

const credential = (scheme: string | null, value: string) => (scheme ? `${scheme} ${value}` : value);

/** The brokered APIs with their credentials read from `source`; the names that are not set. */
export function brokeredApis(spec: Pick<AgentSpec, "model_api" | "apis">, source: NodeJS.ProcessEnv): { apis: BrokeredApi[]; values: string[]; missing: string[] } {
  const apis: BrokeredApi[] = [];
  const values: string[] = [];
  const missing: string[] = [];
  const add = (url: string, secret: string, header: string, scheme: string | null, protocol: ApiProtocol | null) => {
    const value = source[secret];
    if (value === undefined || value === "") {
      missing.push(secret);
      return;
    }
    values.push(value);
    apis.push({ url, header, value: credential(scheme, value), protocol });
  };
  if (spec.model_api) {
    const facts = MODEL_API_PROTOCOLS[spec.model_api.protocol];
    add(spec.model_api.url, spec.model_api.secret, facts.header, facts.scheme, spec.model_api.protocol);
  }
  for (const api of spec.apis ?? []) add(api.url, api.secret, api.header, api.scheme, null);
  return { apis, values, missing };
}

/** What the agent is told: each API's local base URL (in brokeredApis' order) and a placeholder key for its model API. */
export function brokeredEnv(spec: Pick<AgentSpec, "model_api" | "apis">, urls: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  const tools = spec.apis ?? [];
  const offset = spec.model_api ? 1 : 0;
  if (spec.model_api) {
    const facts = MODEL_API_PROTOCOLS[spec.model_api.protocol];
    env[facts.baseUrlEnv] = urls[0]!;
    env[facts.keyEnv] = PLACEHOLDER_KEY;
  }
  tools.forEach((api, i) => (env[api.env] = urls[offset + i]!));
  return env;
}
