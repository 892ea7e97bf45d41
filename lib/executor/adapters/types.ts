import type { Failure } from "../../engine/failure";

/** How Atelier speaks to an agent: Claude Code's stream-json, Codex's JSON events, or plain text. */
export const AGENT_KINDS = ["claude", "codex", "command"] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

/**
 * The roster's Agent as an adapter needs it. The field names are those of the roster's
 * AgentSpec (lib/config/roster.ts), so a roster entry can be passed as it is.
 */
export interface AdapterAgent {
  name: string;
  kind: AgentKind;
  /** argv from the roster; its first element is the program. */
  command: readonly string[];
  /** The roster's default model; null: the CLI's own default. */
  model: string | null;
  /** The models a Loop may pick from (empty: only `model`). */
  models: readonly string[];
  /** Non-secret environment values, shown as they are (e.g. ANTHROPIC_BASE_URL). */
  env: Readonly<Record<string, string>>;
  maxTurns: number | null;
  /** Claude Code's --max-budget-usd: the Attempt's spend, child sessions included; null: none. */
  maxBudgetUsd: number | null;
  allowedTools: readonly string[];
  disallowedTools: readonly string[];
  /** A path to an MCP config file, or the config itself as JSON text. */
  mcpConfig: string | null;
  pricePerMillionInputUsd: number | null;
  pricePerMillionOutputUsd: number | null;
  /** Whether an operator may speak to the running agent. */
  intervene: boolean;
}

export interface InvocationOptions {
  /** The rendered prompt. */
  prompt: string;
  /** The model the Loop picked; it must be the agent's `model` or among its `models`. */
  model?: string | null;
  /** The session to continue (Claude's session_id, Codex's thread_id): a UUID, else refused. */
  resumeSession?: string | null;
  /** The local base URL of the agent's model API, brokered by the gateway (Codex takes it as its provider's). */
  modelApiUrl?: string | null;
}

/** What to run and how to feed it. */
export interface AgentInvocation {
  /** The program and its arguments; never run through a shell. */
  file: string;
  args: string[];
  /**
   * Variables the adapter sets, on top of the executor's clean environment (PATH, HOME, LANG,
   * the roster's secrets, ATELIER_*): the roster's `env:` values and the adapter's own switches.
   */
  env: Record<string, string>;
  /**
   * What to write to stdin first, and whether to close it then. `close: false` only for a
   * streaming input (Claude's --input-format stream-json): the executor closes stdin once the
   * agent's turn is over (a `final` step) and no intervention is pending.
   */
  stdin: { text: string; close: boolean };
  /** Encodes an operator's intervention for stdin; null: this invocation takes none. */
  encodeIntervention: ((text: string) => string) | null;
  /** The model passed to the CLI (null: its default). */
  model: string | null;
}

/** Bounded text: what is kept, and how much was cut. */
export interface Bounded {
  text: string;
  /** Bytes cut from the end; 0 when whole. */
  cutBytes: number;
}

/** One step of a transcript, as a person reads it. */
export type TranscriptStep =
  | { type: "session"; sessionId: string; model: string | null }
  | { type: "text"; text: string }
  | { type: "thinking"; text: string }
  | { type: "tool_call"; id: string; name: string; input: unknown; inputCutBytes: number }
  | { type: "tool_result"; id: string; name: string | null; output: string; cutBytes: number; isError: boolean; exitCode: number | null }
  | { type: "retry"; status: number | null; message: string; attempt: number | null; maxRetries: number | null; delayMs: number | null }
  | { type: "error"; status: number | null; message: string }
  | { type: "final"; text: string; isError: boolean }
  /** A line that is not part of the agent's protocol (plain output, or JSON we do not know). */
  | { type: "output"; stream: "stdout" | "stderr"; text: string };

export type CostSource =
  /** The agent reported its cost (Claude's total_cost_usd). */
  | "agent"
  /** Exact tokens priced with the roster's prices per million tokens (Codex). */
  | "roster_prices";

export interface AgentUsage {
  tokensIn: number;
  tokensOut: number;
  cacheRead: number;
  cacheWrite: number;
  /** null: no cost was reported and no prices are known. */
  costUsd: number | null;
  /**
   * True when costUsd comes from the agent's own report, or from the exact tokens it reported
   * priced with the roster's prices; false when costUsd is null (the tokens are exact still).
   */
  costExact: boolean;
  costSource: CostSource | null;
  turns: number | null;
  /** The agent's own duration (Claude's duration_ms); null when not reported. */
  durationMs: number | null;
  model: string | null;
}

/** What the executor keeps of an agent's run. */
export interface AgentReport {
  sessionId: string | null;
  /** The agent's final answer; null when it gave none. */
  finalText: string | null;
  /** null when the agent reported no usage (the executor estimates then, and says so). */
  usage: AgentUsage | null;
  /** Why the run failed, from the agent's own report; null when it did not fail. */
  failure: Failure | null;
}

/** How the process ended, as the executor saw it. */
export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

/**
 * Reads an agent's output. `feed` takes raw chunks as they come (a chunk may hold several
 * lines, a line may span chunks) and returns the steps completed so far; `end` takes the
 * process's exit, returns the last steps (a partial last line) and the report.
 */
export interface StreamParser {
  feed(chunk: string, stream?: "stdout" | "stderr"): TranscriptStep[];
  end(exit?: ProcessExit): { steps: TranscriptStep[]; report: AgentReport };
  /** Atelier wrote the agent another message (an intervention): one more report of its own may follow. */
  messageSent?(): void;
}

export interface ParserOptions {
  /** The model passed to the CLI (AgentInvocation.model), for agents whose report omits it. */
  model?: string | null;
  /** Tool results longer than this many bytes are cut (default 4 KiB). */
  maxToolResultBytes?: number;
  /** Tool inputs whose JSON is longer than this are shown cut, as text (default 8 KiB). */
  maxToolInputBytes?: number;
}

export interface AgentAdapter {
  kind: AgentKind;
  /** The argv, env and stdin policy for one run; throws AttemptFailureError(configuration). */
  invocation(agent: AdapterAgent, options: InvocationOptions): AgentInvocation;
  parser(agent: AdapterAgent, options?: ParserOptions): StreamParser;
}
