import { agentFailure, budgetFailure, infraFailure, type Failure } from "../../engine/failure";
import { configurationError, findFlag, pickModel, refuseManagedFlags, resumeSessionOf, rosterEnv } from "./argv";
import { boundInput, boundText } from "./bound";
import { apiFailure, reason } from "./classify";
import { arr, JsonLinesParser, num, obj, str, type Json } from "./json-lines-parser";
import { isSessionId } from "./session-id";
import type { AdapterAgent, AgentAdapter, AgentInvocation, AgentUsage, InvocationOptions, ProcessExit, TranscriptStep } from "./types";

/**
 * Claude Code (`claude -p --output-format stream-json --verbose`). The prompt goes on stdin,
 * which is then closed; with `intervene: true` the input is `--input-format stream-json`
 * instead: the prompt and each intervention are JSON user messages, and stdin stays open until
 * the agent's turn is over.
 */

/** Claude Code's own retries of a failed API call are capped: Atelier retries the Attempt. */
export const CLAUDE_MAX_RETRIES_CAP = 3;
export const CLAUDE_DEFAULT_MAX_RETRIES = 2;

/** The switches Claude Code needs to run unattended in Atelier's sandbox. */
export const CLAUDE_ENV: Readonly<Record<string, string>> = Object.freeze({
  // as root, --dangerously-skip-permissions is refused unless the CLI is told it is sandboxed
  IS_SANDBOX: "1",
  // only the Messages API is called: no telemetry, no update checks, no error reports
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_ERROR_REPORTING: "1",
});

const MANAGED = [
  { names: ["--model"], instead: "set model: (or models: for a Loop to pick from) in the roster" },
  { names: ["--max-turns"], instead: "set max_turns: in the roster" },
  { names: ["--max-budget-usd"], instead: "set max_budget_usd: in the roster" },
  { names: ["--allowedTools", "--allowed-tools"], instead: "set allowed_tools: in the roster" },
  { names: ["--disallowedTools", "--disallowed-tools"], instead: "set disallowed_tools: in the roster" },
  { names: ["--mcp-config"], instead: "set mcp_config: in the roster" },
  { names: ["--resume", "-r", "--continue", "-c", "--session-id"], instead: "Atelier resumes the Attempt's session itself" },
  { names: ["--input-format"], instead: "Atelier picks the input format (stream-json when intervene: true)" },
] as const;

/** A user message of `--input-format stream-json`. */
export function claudeUserMessage(text: string): string {
  return `${JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text }] } })}\n`;
}

export function claudeInvocation(agent: AdapterAgent, options: InvocationOptions): AgentInvocation {
  const [file, ...rest] = agent.command;
  if (!file) throw configurationError(agent, "command must name a program, e.g. [claude]");
  const args = [...rest];
  refuseManagedFlags(agent, args, MANAGED);
  const format = findFlag(args, ["--output-format"]);
  if (format && format.value !== "stream-json") {
    throw configurationError(agent, `Atelier reads Claude Code's stream-json: remove --output-format ${format.value ?? ""} from command (or make it stream-json)`);
  }
  if (!findFlag(args, ["-p", "--print"])) args.unshift("-p");
  if (!format) args.push("--output-format", "stream-json");
  if (!findFlag(args, ["--verbose"])) args.push("--verbose"); // stream-json with -p requires it
  if (!findFlag(args, ["--dangerously-skip-permissions", "--permission-mode"])) args.push("--dangerously-skip-permissions");

  const model = pickModel(agent, options.model);
  if (model) args.push("--model", model);
  if (agent.maxTurns !== null) args.push("--max-turns", String(agent.maxTurns));
  if (agent.maxBudgetUsd !== null) args.push("--max-budget-usd", String(agent.maxBudgetUsd));
  if (agent.allowedTools.length) args.push("--allowedTools", agent.allowedTools.join(","));
  if (agent.disallowedTools.length) args.push("--disallowedTools", agent.disallowedTools.join(","));
  // MCP servers come from the roster only: a repository's .mcp.json would otherwise be started
  if (!findFlag(args, ["--strict-mcp-config"])) args.push("--strict-mcp-config");
  if (agent.mcpConfig) args.push("--mcp-config", agent.mcpConfig);
  const resume = resumeSessionOf(agent, options.resumeSession);
  if (resume) args.push("--resume", resume);

  const env = { ...rosterEnv(agent), ...CLAUDE_ENV, CLAUDE_CODE_MAX_RETRIES: String(claudeMaxRetries(agent.env.CLAUDE_CODE_MAX_RETRIES)) };
  if (agent.intervene) {
    args.push("--input-format", "stream-json");
    return { file, args, env, model, stdin: { text: claudeUserMessage(options.prompt), close: false }, encodeIntervention: claudeUserMessage };
  }
  return { file, args, env, model, stdin: { text: options.prompt, close: true }, encodeIntervention: null };
}

/** The roster may lower Claude Code's retries, never raise them above the cap. */
export function claudeMaxRetries(configured: string | undefined): number {
  const n = configured === undefined ? NaN : Number(configured);
  if (!Number.isInteger(n) || n < 0) return CLAUDE_DEFAULT_MAX_RETRIES;
  return Math.min(n, CLAUDE_MAX_RETRIES_CAP);
}


/** The text of a tool_result's content: a string, or a list of blocks. */
function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  return arr(content)
    .map((block) => {
      const b = obj(block);
      if (!b) return "";
      if (b.type === "text") return str(b.text) ?? "";
      return `[${str(b.type) ?? "block"}]`;
    })
    .join("\n");
}

/** A tool_result of a tool the CLI refused to run: not offered (disallowed_tools) or denied by a permission rule. */
const DENIED_TOOL = /no such tool available|is disabled for this session|permission to use .* (?:has been|was) denied|has been denied by permission rule/i;
/** A tool_result of an MCP tool whose server went away mid-call. */
const MCP_TRANSPORT = /connection closed|not connected|transport (?:closed|error)|econnreset|epipe|server (?:exited|disconnected)/i;

/**
 * What Claude Code's stream says besides its result, which fails the Attempt even when the
 * agent finished: a tool it was refused, an MCP server that did not start, an MCP call that
 * lost its server, a child session refused for the budget (subagent_stats.refused.budget).
 */
interface ToolTrouble {
  denied: string[];
  mcpDown: string[];
  mcpLost: string[];
}

export class ClaudeStreamParser extends JsonLinesParser<Pick<AdapterAgent, "name" | "maxTurns" | "maxBudgetUsd">> {
  private readonly trouble: ToolTrouble = { denied: [], mcpDown: [], mcpLost: [] };
  private readonly toolNames = new Map<string, string>();
  private sessionId: string | null = null;
  private model: string | null = null;
  private readonly results: Json[] = [];
  /** The last result taken. */
  private result: Json | null = null;
  /**
   * How many results are taken: one per message Atelier wrote. Any process of the sandbox can
   * write a line to the CLI's stdout; a `result` beyond these is shown, never believed.
   */
  private expectedResults = 1;
  private lastApiError: { status: number | null; message: string } | null = null;

  protected event(event: Json): TranscriptStep[] {
    switch (event.type) {
      case "system":
        return this.system(event);
      case "assistant":
        return this.assistant(event);
      case "user":
        return this.user(event);
      case "result":
        return this.onResult(event);
      default:
        return []; // stream_event, control messages …: kept in the raw lines only
    }
  }

  private system(event: Json): TranscriptStep[] {
    if (event.subtype === "init") {
      if (isSessionId(event.session_id) && !this.sessionId) this.sessionId = event.session_id;
      this.model = str(event.model) ?? this.model;
      for (const server of arr(event.mcp_servers)) {
        const s = obj(server);
        if (s && s.status === "failed") this.trouble.mcpDown.push(str(s.name) ?? "?");
      }
      return this.sessionId ? [{ type: "session", sessionId: this.sessionId, model: this.model }] : [];
    }
    if (event.subtype === "api_retry") {
      const status = num(event.error_status);
      const message = str(event.error) ?? str(obj(event.error)?.message) ?? (status ? `HTTP ${status}` : "API error");
      this.lastApiError = { status, message };
      return [{ type: "retry", status, message, attempt: num(event.attempt), maxRetries: num(event.max_retries), delayMs: num(event.retry_delay_ms) }];
    }
    return [];
  }

  private assistant(event: Json): TranscriptStep[] {
    const message = obj(event.message);
    const blocks = arr(message?.content);
    const messageModel = str(message?.model);
    if (messageModel && !messageModel.startsWith("<")) this.model = messageModel;
    if (event.is_api_error_message === true || typeof event.error === "string") {
      const status = num(event.api_error_status);
      const text = blocks.map((b) => str(obj(b)?.text) ?? "").join(" ").trim() || str(event.error) || "API error";
      this.lastApiError = { status, message: text };
      return [{ type: "error", status, message: text }];
    }
    const steps: TranscriptStep[] = [];
    for (const block of blocks) {
      const b = obj(block);
      if (!b) continue;
      if (b.type === "text" && str(b.text)) {
        steps.push({ type: "text", text: b.text as string });
      } else if (b.type === "thinking" && str(b.thinking)) {
        steps.push({ type: "thinking", text: boundText(b.thinking as string, this.maxResult).text });
      } else if (b.type === "tool_use" || b.type === "server_tool_use" || b.type === "mcp_tool_use") {
        const id = str(b.id) ?? "";
        const name = str(b.name) ?? "tool";
        this.toolNames.set(id, name);
        const { input, cutBytes } = boundInput(b.input, this.maxInput);
        steps.push({ type: "tool_call", id, name, input, inputCutBytes: cutBytes });
      }
    }
    return steps;
  }

  private user(event: Json): TranscriptStep[] {
    const steps: TranscriptStep[] = [];
    for (const block of arr(obj(event.message)?.content)) {
      const b = obj(block);
      if (!b || b.type !== "tool_result") continue;
      const id = str(b.tool_use_id) ?? "";
      const name = this.toolNames.get(id) ?? null;
      const { text, cutBytes } = boundText(toolResultText(b.content), this.maxResult);
      if (b.is_error === true) this.noteToolError(name ?? "?", text);
      steps.push({ type: "tool_result", id, name, output: text, cutBytes, isError: b.is_error === true, exitCode: null });
    }
    return steps;
  }

  private noteToolError(name: string, text: string): void {
    if (DENIED_TOOL.test(text)) this.trouble.denied.push(name);
    else if (name.startsWith("mcp__") && MCP_TRANSPORT.test(text)) this.trouble.mcpLost.push(name);
  }

  private onResult(event: Json): TranscriptStep[] {
    const text = str(event.result) ?? "";
    if (this.results.length < this.expectedResults) {
      this.result = event;
      this.results.push(event);
      if (isSessionId(event.session_id) && !this.sessionId) this.sessionId = event.session_id;
    }
    return [{ type: "final", text, isError: event.is_error === true }];
  }

  messageSent(): void {
    this.expectedResults++;
  }

  /**
   * With a streaming input there is a result per user message: its usage, num_turns and
   * duration_ms are that message's (so they add up), total_cost_usd and modelUsage the process's
   * so far (so the last one counts).
   */
  protected usage(): AgentUsage | null {
    const last = this.result;
    if (!last) return null;
    const sum = (pick: (r: Json) => number | null) => this.results.reduce((n, r) => n + (pick(r) ?? 0), 0);
    const usage = (r: Json) => obj(r.usage) ?? {};
    const modelUsage = obj(last.modelUsage) ?? {};
    // the model that cost the most, else the one the session started with
    const models = Object.entries(modelUsage).sort((a, b) => (num(obj(b[1])?.costUSD) ?? 0) - (num(obj(a[1])?.costUSD) ?? 0));
    const cost = num(last.total_cost_usd);
    const anyTurns = this.results.some((r) => num(r.num_turns) !== null);
    const anyDuration = this.results.some((r) => num(r.duration_ms) !== null);
    return {
      tokensIn: sum((r) => num(usage(r).input_tokens)),
      tokensOut: sum((r) => num(usage(r).output_tokens)),
      cacheRead: sum((r) => num(usage(r).cache_read_input_tokens)),
      cacheWrite: sum((r) => num(usage(r).cache_creation_input_tokens)),
      costUsd: cost,
      costExact: cost !== null,
      costSource: cost === null ? null : "agent",
      turns: anyTurns ? sum((r) => num(r.num_turns)) : null,
      durationMs: anyDuration ? sum((r) => num(r.duration_ms)) : null,
      model: models[0]?.[0] ?? this.model,
    };
  }

  protected failure(exit?: ProcessExit): Failure | null {
    const r = this.result;
    const name = this.agent.name;
    if (r) {
      const subtype = str(r.subtype) ?? "";
      if (subtype === "error_max_turns") {
        const limit = this.agent.maxTurns !== null ? ` (${this.agent.maxTurns})` : "";
        return agentFailure("step_limit", `agent ${name} used all its turns${limit} before it finished (${num(r.num_turns) ?? "?"} turns)`);
      }
      if (subtype === "error_max_budget_usd") return budgetFailure(`agent ${name} spent its budget (max_budget_usd ${this.agent.maxBudgetUsd ?? "?"}) before it finished`);
      if (r.is_error === true || subtype.startsWith("error")) {
        const text = str(r.result) ?? arr(r.errors).map((e) => String(e)).join("; ");
        const status = num(r.api_error_status);
        return (
          apiFailure(name, status, text || this.lastApiError?.message || "") ??
          (this.lastApiError ? apiFailure(name, this.lastApiError.status, this.lastApiError.message) : null) ??
          agentFailure("agent_exit", `agent ${name} reported an error: ${reason(text || subtype || "no reason given")}`)
        );
      }
      return this.toolFailure(r);
    }
    // no result: the process died or was stopped; an API error it reported is the likely cause
    if (this.lastApiError && exit && exit.code !== 0) return apiFailure(name, this.lastApiError.status, this.lastApiError.message);
    return null;
  }

  /** A finished run fails still when its tools failed it (ToolTrouble); null when they did not. */
  private toolFailure(result: Json): Failure | null {
    const name = this.agent.name;
    const { denied, mcpDown, mcpLost } = this.trouble;
    const refusedForBudget = num(obj(obj(result.subagent_stats)?.refused)?.budget) ?? 0;
    if (refusedForBudget > 0) {
      return budgetFailure(`agent ${name} asked for ${refusedForBudget} child session(s) beyond its budget (max_budget_usd ${this.agent.maxBudgetUsd ?? "?"})`);
    }
    const permissionDenials = arr(result.permission_denials).map((d) => str(obj(d)?.tool_name) ?? "?");
    const refused = [...new Set([...denied, ...permissionDenials])];
    if (refused.length) return agentFailure("tool_denied", `agent ${name} asked for a tool the roster does not permit: ${refused.join(", ")}`);
    if (mcpDown.length) return agentFailure("mcp_discovery", `agent ${name}: the MCP server(s) ${[...new Set(mcpDown)].join(", ")} of mcp_config did not start or list their tools`);
    if (mcpLost.length) return infraFailure("mcp_transport", `agent ${name}: an MCP call lost its server mid-run (${[...new Set(mcpLost)].join(", ")})`);
    return null;
  }

  protected session(): string | null {
    return this.sessionId;
  }

  protected answer(): string | null {
    const r = this.result;
    const failed = r ? r.is_error === true || String(r.subtype ?? "").startsWith("error") : false;
    // without a result the run was cut short: its last words are no answer
    return r && !failed ? str(r.result) || null : null;
  }
}

export const claudeAdapter: AgentAdapter = {
  kind: "claude",
  invocation: claudeInvocation,
  parser: (agent, options) => new ClaudeStreamParser(agent, options),
};
