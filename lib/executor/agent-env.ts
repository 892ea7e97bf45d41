import { agentFailure } from "../engine/failure";
import type { ResolvedCommand } from "./agent-command";
import type { NamedAgentSpec } from "./agent-spec";
import { AttemptFailureError } from "./attempt-failure-error";
import { AGENT_IDENTITY } from "./git";
import type { BrokeredApi } from "./agent-sandbox/api-broker";
import { brokeredApis } from "./brokered-apis";

/** What the agent is told about its Attempt. */
export interface AgentContext {
  runId: string;
  attemptId: string;
  /** owner/name */
  repo: string;
  /** The Item's number; null for a schedule Tick. */
  number: number | null;
  branch: string;
  resultFile: string;
  prompt: string;
}

/** Larger prompts are given on stdin only (one environment string is limited to 128 KiB on Linux). */
export const MAX_ENV_PROMPT_BYTES = 100_000;

export interface AgentEnv {
  env: Record<string, string>;
  /** Values of the roster secrets handed over or brokered, for the Redactor. */
  secretValues: string[];
  /** The APIs the gateway brokers, with their credentials (kept by the worker, never in `env`). */
  apis: BrokeredApi[];
  promptInEnv: boolean;
}

/**
 * A clean environment: PATH, HOME and LANG of the worker, the Agent's named secrets, and the
 * Attempt's ATELIER_* context. Nothing else of the worker's environment (its database URL, its
 * App key, the installation token) reaches the agent. The credentials of its brokered APIs
 * (its model key) are read here too, for the gateway: they stay out of the environment.
 */
export function buildAgentEnv(
  spec: NamedAgentSpec,
  resolved: ResolvedCommand,
  context: AgentContext,
  source: NodeJS.ProcessEnv = process.env,
): AgentEnv {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "LANG"]) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && resolved.passEnvPrefixes.some((p) => name.startsWith(p))) env[name] = value;
  }
  const brokered = brokeredApis(spec, source);
  const secretValues: string[] = [...brokered.values];
  const missing: string[] = [...brokered.missing];
  for (const name of spec.secrets ?? []) {
    const value = source[name];
    if (value === undefined || value === "") missing.push(name);
    else {
      env[name] = value;
      secretValues.push(value);
    }
  }
  if (missing.length > 0) {
    throw new AttemptFailureError(
      agentFailure(
        "configuration",
        `agent ${spec.name} needs ${missing.join(", ")} but the worker's environment does not set ${missing.length === 1 ? "it" : "them"}`,
      ),
    );
  }
  const promptInEnv = Buffer.byteLength(context.prompt) <= MAX_ENV_PROMPT_BYTES;
  Object.assign(env, AGENT_IDENTITY, {
    ATELIER_RUN_ID: context.runId,
    ATELIER_ATTEMPT_ID: context.attemptId,
    ATELIER_REPOSITORY: context.repo,
    ATELIER_ITEM_NUMBER: context.number === null ? "" : String(context.number),
    ATELIER_BRANCH: context.branch,
    ATELIER_RESULT_FILE: context.resultFile,
    ATELIER_INTERVENE: spec.intervene ? "1" : "0",
  });
  if (promptInEnv) env.ATELIER_PROMPT = context.prompt;
  return { env, secretValues, apis: brokered.apis, promptInEnv };
}
