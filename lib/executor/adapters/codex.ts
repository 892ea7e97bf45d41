import { agentFailure, type Failure } from "../../engine/failure";
import { configurationError, findFlag, pickModel, refuseManagedFlags, resumeSessionOf, rosterEnv } from "./argv";
import { boundInput, boundText } from "./bound";
import { apiFailure, reason, statusInText } from "./classify";
import { JsonLinesParser, num, obj, str, type Json } from "./json-lines-parser";
import { isSessionId } from "./session-id";
import type { AdapterAgent, AgentAdapter, AgentInvocation, AgentUsage, InvocationOptions, ProcessExit, TranscriptStep } from "./types";

/**
 * Codex (`codex exec --json --dangerously-bypass-approvals-and-sandbox -`): the prompt on stdin,
 * then closed (codex exec takes no input while it runs). Its own sandbox is bypassed: Atelier's
 * is the outer one, and Codex's would make .git read-only. A custom endpoint (the roster's
 * `env: { OPENAI_BASE_URL }`; Codex itself ignores that variable) becomes a model provider
 * given with `-c`, whose retries are capped.
 */

/** The id of the model provider Atelier defines for a custom endpoint. */
export const CODEX_PROVIDER_ID = "atelier";
/** Codex's own retries of a request or a dropped stream, on Atelier's provider. */
export const CODEX_MAX_RETRIES = 2;

/** Config that keeps Codex to the model API (seen with strace: without it, it looks up ab.chatgpt.com, chatgpt.com and api.github.com). */
export const CODEX_QUIET_CONFIG: readonly string[] = Object.freeze(["analytics.enabled=false", "features.plugins=false"]);

/** Switches for running unattended. */
export const CODEX_ENV: Readonly<Record<string, string>> = Object.freeze({
  NO_COLOR: "1",
});

const MANAGED = [
  { names: ["-m", "--model"], instead: "set model: (or models: for a Loop to pick from) in the roster" },
  { names: ["--full-auto"], instead: "it no longer exists; Atelier adds --dangerously-bypass-approvals-and-sandbox (its own sandbox is the outer one)" },
  { names: ["-s", "--sandbox"], instead: "Codex's sandbox makes .git read-only, so the agent could not commit; Atelier's sandbox is the outer one" },
  { names: ["--last"], instead: "Atelier resumes the Attempt's session itself" },
] as const;

const toml = (s: string) => JSON.stringify(s);

export function codexInvocation(agent: AdapterAgent, options: InvocationOptions): AgentInvocation {
  const [file, ...rest] = agent.command;
  if (!file) throw configurationError(agent, "command must name a program, e.g. [codex, exec]");
  const args = [...rest];
  if (args[0] === undefined || args[0].startsWith("-")) args.unshift("exec");
  if (args[0] !== "exec") throw configurationError(agent, `Atelier runs \`codex exec\`: command must be [codex, exec, …], not [codex, ${args[0]}, …]`);
  args.shift();
  if (args.includes("resume")) throw configurationError(agent, "remove resume from command: Atelier resumes the Attempt's session itself");
  refuseManagedFlags(agent, args, MANAGED);
  for (const [key, value] of [
    ["max_turns", agent.maxTurns],
    ["max_budget_usd", agent.maxBudgetUsd],
    ["allowed_tools", agent.allowedTools.length || null],
    ["disallowed_tools", agent.disallowedTools.length || null],
    ["mcp_config", agent.mcpConfig],
  ] as const) {
    if (value !== null) throw configurationError(agent, `${key} is a Claude Code setting; codex exec has no such option`);
  }
  // the prompt is read from stdin: "-" goes last, once
  while (args.at(-1) === "-") args.pop();
  for (const flag of ["--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"]) {
    if (!findFlag(args, [flag])) args.push(flag);
  }
  // no OTLP metrics (ab.chatgpt.com) and no plugin sync (chatgpt.com, api.github.com): the model API only
  args.push(...CODEX_QUIET_CONFIG.flatMap((c) => ["-c", c]));
  const model = pickModel(agent, options.model);
  if (model) args.push("-m", model);
  // the gateway's local URL for the brokered model API, else a base URL the roster's env: gives
  const baseUrl = options.modelApiUrl ?? agent.env.OPENAI_BASE_URL;
  if (baseUrl) {
    if (args.some((a) => /^model_providers?[.=]/.test(a))) {
      throw configurationError(agent, "command sets a model provider with -c, and env: sets OPENAI_BASE_URL: keep one");
    }
    const p = CODEX_PROVIDER_ID;
    args.push(
      "-c", `model_provider=${toml(p)}`,
      "-c", `model_providers.${p}.name=${toml(p)}`,
      "-c", `model_providers.${p}.base_url=${toml(baseUrl)}`,
      "-c", `model_providers.${p}.wire_api="responses"`,
      "-c", `model_providers.${p}.env_key="OPENAI_API_KEY"`,
      "-c", `model_providers.${p}.request_max_retries=${CODEX_MAX_RETRIES}`,
      "-c", `model_providers.${p}.stream_max_retries=${CODEX_MAX_RETRIES}`,
    );
  }
  const resume = resumeSessionOf(agent, options.resumeSession);
  const argv = resume ? ["exec", "resume", ...args, resume, "-"] : ["exec", ...args, "-"];
  return {
    file,
    args: argv,
    env: { ...rosterEnv(agent), ...CODEX_ENV },
    model,
    stdin: { text: options.prompt, close: true },
    encodeIntervention: null,
  };
}


/** "Reconnecting... 2/5 (unexpected status 529 …)" */
const RECONNECTING = /^Reconnecting\.*\s*(\d+)\/(\d+)\s*\((.*)\)\s*$/s;

export class CodexStreamParser extends JsonLinesParser<Pick<AdapterAgent, "name" | "model" | "pricePerMillionInputUsd" | "pricePerMillionOutputUsd">> {
  private readonly started = new Set<string>();
  private threadId: string | null = null;
  private lastMessage: string | null = null;
  private finalText: string | null = null;
  private turns = 0;
  private tokens = { in: 0, cached: 0, cacheWrite: 0, out: 0 };
  private turnFailed: string | null = null;
  private lastError: string | null = null;

  protected event(event: Json): TranscriptStep[] {
    switch (event.type) {
      case "thread.started":
        if (isSessionId(event.thread_id) && !this.threadId) this.threadId = event.thread_id;
        return this.threadId ? [{ type: "session", sessionId: this.threadId, model: this.options.model ?? this.agent.model }] : [];
      case "turn.started":
        this.lastMessage = null;
        return [];
      case "item.started":
        return this.itemStarted(obj(event.item));
      case "item.completed":
        return this.itemCompleted(obj(event.item));
      case "turn.completed": {
        const u = obj(event.usage) ?? {};
        this.turns++;
        this.tokens.in += num(u.input_tokens) ?? 0;
        this.tokens.cached += num(u.cached_input_tokens) ?? 0;
        this.tokens.cacheWrite += num(u.cache_write_input_tokens) ?? 0;
        this.tokens.out += num(u.output_tokens) ?? 0;
        this.finalText = this.lastMessage;
        return [{ type: "final", text: this.lastMessage ?? "", isError: false }];
      }
      case "turn.failed": {
        const message = str(obj(event.error)?.message) ?? this.lastError ?? "the turn failed";
        this.turnFailed = message;
        return [{ type: "final", text: message, isError: true }];
      }
      case "error": {
        const message = str(event.message) ?? "error";
        const retry = RECONNECTING.exec(message);
        if (retry) {
          const why = retry[3] as string;
          this.lastError = why;
          return [{ type: "retry", status: statusInText(why), message: why, attempt: Number(retry[1]), maxRetries: Number(retry[2]), delayMs: null }];
        }
        this.lastError = message;
        return [{ type: "error", status: statusInText(message), message }];
      }
      default:
        return [];
    }
  }

  private call(item: Json): TranscriptStep | null {
    const id = str(item.id) ?? "";
    let name: string;
    let input: unknown;
    switch (item.type) {
      case "command_execution":
        name = "exec";
        input = { command: str(item.command) ?? "" };
        break;
      case "mcp_tool_call":
        name = `${str(item.server) ?? "mcp"}.${str(item.tool) ?? "tool"}`;
        input = item.arguments ?? null;
        break;
      case "web_search":
        name = "web_search";
        input = { query: str(item.query) ?? "" };
        break;
      case "file_change":
        name = "apply_patch";
        input = { changes: item.changes ?? [] };
        break;
      default:
        return null;
    }
    this.started.add(id);
    const bounded = boundInput(input, this.maxInput);
    return { type: "tool_call", id, name, input: bounded.input, inputCutBytes: bounded.cutBytes };
  }

  private itemStarted(item: Json | null): TranscriptStep[] {
    if (!item) return [];
    const step = this.call(item);
    return step ? [step] : [];
  }

  private itemCompleted(item: Json | null): TranscriptStep[] {
    if (!item) return [];
    const id = str(item.id) ?? "";
    switch (item.type) {
      case "agent_message": {
        const text = str(item.text) ?? "";
        this.lastMessage = text;
        return text ? [{ type: "text", text }] : [];
      }
      case "reasoning": {
        const text = str(item.text) ?? "";
        return text ? [{ type: "thinking", text: boundText(text, this.maxResult).text }] : [];
      }
      case "error": {
        // codex reports warnings (e.g. unknown model metadata) as error items; the turn goes on
        const message = str(item.message) ?? "error";
        return [{ type: "error", status: null, message }];
      }
      case "command_execution":
      case "mcp_tool_call":
      case "web_search":
      case "file_change": {
        const steps: TranscriptStep[] = [];
        if (!this.started.has(id)) {
          const call = this.call(item);
          if (call) steps.push(call);
        }
        this.started.delete(id);
        const exitCode = num(item.exit_code);
        const status = str(item.status);
        let output: string;
        if (item.type === "command_execution") output = str(item.aggregated_output) ?? "";
        else if (item.type === "mcp_tool_call") output = JSON.stringify(item.result ?? item.error ?? null);
        else if (item.type === "file_change") output = status ?? "";
        else output = "";
        const { text, cutBytes } = boundText(output, this.maxResult);
        const isError = status === "failed" || (exitCode !== null && exitCode !== 0) || (item.type === "mcp_tool_call" && !!item.error);
        steps.push({ type: "tool_result", id, name: null, output: text, cutBytes, isError, exitCode });
        return steps;
      }
      default:
        return [];
    }
  }

  protected usage(): AgentUsage | null {
    if (this.turns === 0) return null;
    const pin = this.agent.pricePerMillionInputUsd;
    const pout = this.agent.pricePerMillionOutputUsd;
    // cached input is priced as input: without a cache price in the roster this is the upper bound
    const cost = pin !== null && pout !== null ? (this.tokens.in * pin + this.tokens.out * pout) / 1_000_000 : null;
    return {
      tokensIn: this.tokens.in,
      tokensOut: this.tokens.out,
      cacheRead: this.tokens.cached,
      cacheWrite: this.tokens.cacheWrite,
      costUsd: cost,
      costExact: cost !== null,
      costSource: cost === null ? null : "roster_prices",
      turns: this.turns,
      durationMs: null,
      model: this.options.model ?? this.agent.model,
    };
  }

  protected failure(exit?: ProcessExit): Failure | null {
    const name = this.agent.name;
    if (this.turnFailed !== null) {
      return apiFailure(name, statusInText(this.turnFailed), this.turnFailed) ?? agentFailure("agent_exit", `agent ${name}: ${reason(this.turnFailed)}`);
    }
    if (this.turns === 0 && this.lastError && exit && exit.code !== 0) return apiFailure(name, statusInText(this.lastError), this.lastError);
    return null;
  }

  protected session(): string | null {
    return this.threadId;
  }

  protected answer(): string | null {
    return this.turnFailed === null ? this.finalText : null;
  }
}

export const codexAdapter: AgentAdapter = {
  kind: "codex",
  invocation: codexInvocation,
  parser: (agent, options) => new CodexStreamParser(agent, options),
};
