import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  adapterFor,
  ClaudeStreamParser,
  CodexStreamParser,
  PlainTextParser,
  type AgentKind,
  type StreamParser,
  type TranscriptStep,
} from "../../../lib/executor/adapters";
import { LineSplitter } from "../../../lib/executor/adapters/json-lines";
import { agent, FIXTURES } from "./real-cli";

/**
 * The parsers against output recorded from the real CLIs (fixtures/, written by the *-real
 * tests with ATELIER_RECORD_ADAPTER_FIXTURES=1) and against hand-made lines for the cases the
 * fakes do not script.
 */

const fixture = (name: string) => readFileSync(join(FIXTURES, `${name}.jsonl`), "utf8");

const claude = agent({ kind: "claude", command: ["claude"], maxTurns: 1 });
const codex = agent({ kind: "codex", command: ["codex", "exec"], model: "gpt-5.5", pricePerMillionInputUsd: 2, pricePerMillionOutputUsd: 8 });

function parser(kind: AgentKind): StreamParser {
  return adapterFor(kind).parser(kind === "claude" ? claude : codex);
}

/** A deterministic pseudo-random chunking of text (some chunks empty, some a byte, some long). */
function chunked(text: string, seed: number): string[] {
  const out: string[] = [];
  let state = seed;
  let i = 0;
  while (i < text.length) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const size = state % 7 === 0 ? 0 : (state % 97) + 1;
    out.push(text.slice(i, i + size));
    i += size;
  }
  return out;
}

function parseAll(p: StreamParser, chunks: string[], exit = { code: 0, signal: null }) {
  const steps: TranscriptStep[] = [];
  for (const c of chunks) steps.push(...p.feed(c));
  const end = p.end(exit);
  steps.push(...end.steps);
  return { steps, report: end.report };
}

describe.each([
  ["claude-commit", "claude", 0],
  ["claude-401", "claude", 1],
  ["claude-529-then-ok", "claude", 0],
  ["claude-529-exhausted", "claude", 1],
  ["claude-max-turns", "claude", 1],
  ["codex-commit", "codex", 0],
  ["codex-401", "codex", 1],
  ["codex-529-exhausted", "codex", 1],
  ["codex-429-exhausted", "codex", 1],
  ["codex-500-exhausted", "codex", 1],
  ["claude-429-exhausted", "claude", 1],
  ["claude-intervene", "claude", 0],
] as const)("recorded %s", (name, kind, code) => {
  it("parses the stream, not the chunks: any chunking gives the same steps and report", () => {
    const text = fixture(name);
    const whole = parseAll(parser(kind), [text], { code, signal: null });
    for (const seed of [1, 7, 42]) {
      expect(parseAll(parser(kind), chunked(text, seed), { code, signal: null })).toEqual(whole);
    }
    // one character at a time, too
    expect(parseAll(parser(kind), [...text], { code, signal: null })).toEqual(whole);
    expect(whole.steps.some((s) => s.type === "output")).toBe(false);
  });

  it("tolerates lines that are not JSON, and a last line without its newline", () => {
    const text = fixture(name);
    const whole = parseAll(parser(kind), [text], { code, signal: null });
    const noisy = parseAll(parser(kind), [`Warning: something\n[1, 2]\n{"broken": \n${text.replace(/\n$/, "")}`], { code, signal: null });
    expect(noisy.report).toEqual(whole.report);
    expect(noisy.steps.filter((s) => s.type === "output").map((s) => (s as { text: string }).text)).toEqual(["Warning: something", "[1, 2]", '{"broken": ']);
  });
});

describe("what the recorded runs report", () => {
  const run = (name: string, kind: AgentKind, code = 0) => parseAll(parser(kind), [fixture(name)], { code, signal: null });

  it("claude: a 401 is authentication, with the CLI's sentence; its retries are steps", () => {
    const { steps, report } = run("claude-401", "claude", 1);
    expect(report.failure).toMatchObject({ kind: "AgentFailure", category: "authentication", retryable: false });
    expect(report.failure!.message).toContain("Invalid API key");
    expect(steps.filter((s) => s.type === "retry").every((s) => (s as { status: number }).status === 401)).toBe(true);
    expect(report.finalText).toBeNull();
  });

  it("claude: a 529 retried then answered is no failure; exhausted it is gateway_rate_limit", () => {
    const ok = run("claude-529-then-ok", "claude");
    expect(ok.steps.find((s) => s.type === "retry")).toMatchObject({ status: 529, attempt: 1 });
    expect(ok.report.failure).toBeNull();
    expect(ok.report.usage).toMatchObject({ tokensIn: 1200, tokensOut: 80, cacheRead: 500, cacheWrite: 300, turns: 1, model: "claude-sonnet-4-5", costSource: "agent" });
    expect(run("claude-529-exhausted", "claude", 1).report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit", retryable: true });
  });

  it("claude: max turns is step_limit", () => {
    expect(run("claude-max-turns", "claude", 1).report.failure).toMatchObject({ kind: "AgentFailure", category: "step_limit", retryable: false });
  });

  it("claude: the commit run's steps, in order", () => {
    const types = run("claude-commit", "claude").steps.map((s) => s.type);
    expect(types).toEqual(["session", "text", "tool_call", "tool_result", "text", "final"]);
  });

  it("codex: the commit run's steps, usage priced from the roster", () => {
    const { steps, report } = run("codex-commit", "codex");
    expect(steps.map((s) => s.type)).toEqual(["session", "text", "tool_call", "tool_result", "text", "final"]);
    expect(report.usage).toMatchObject({ tokensIn: 4000, tokensOut: 200, cacheRead: 1000, costUsd: (4000 * 2 + 200 * 8) / 1e6, costSource: "roster_prices", model: "gpt-5.5" });
  });

  it("codex: a 401 is authentication; a 529 exhausted is gateway_rate_limit", () => {
    expect(run("codex-401", "codex", 1).report.failure).toMatchObject({ category: "authentication", retryable: false });
    const overloaded = run("codex-529-exhausted", "codex", 1);
    expect(overloaded.report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit" });
    expect(overloaded.steps.filter((s) => s.type === "retry")).not.toHaveLength(0);
  });

  it("codex: a 429 exhausted is gateway_rate_limit; a 500 (which codex words as high demand) is gateway_error", () => {
    expect(run("codex-429-exhausted", "codex", 1).report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit" });
    expect(run("codex-500-exhausted", "codex", 1).report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_error" });
    expect(run("claude-429-exhausted", "claude", 1).report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit" });
  });

  it("codex without prices: exact tokens, no cost", () => {
    const p = new CodexStreamParser({ ...codex, pricePerMillionInputUsd: null });
    p.feed(fixture("codex-commit"));
    expect(p.end({ code: 0, signal: null }).report.usage).toMatchObject({ tokensIn: 4000, costUsd: null, costExact: false, costSource: null });
  });
});

const line = (o: unknown) => `${JSON.stringify(o)}\n`;

describe("bounded tool results and inputs", () => {
  it("claude: a long tool result keeps 4 KiB and says how much was cut, at a character boundary", () => {
    const p = new ClaudeStreamParser(claude);
    const big = `${"é".repeat(3000)}tail`; // 6004 bytes
    const steps = p.feed(
      line({ type: "assistant", message: { content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "a" } }] } }) +
        line({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: big }], is_error: true }] } }),
    );
    const result = steps[1] as Extract<TranscriptStep, { type: "tool_result" }>;
    expect(result.name).toBe("Read");
    expect(result.isError).toBe(true);
    expect(Buffer.byteLength(result.output)).toBe(4096);
    expect(result.cutBytes).toBe(6004 - 4096);
    expect(result.output.endsWith("é")).toBe(true);
  });

  it("a huge tool input is shown as its JSON, cut", () => {
    const p = new ClaudeStreamParser(claude, { maxToolInputBytes: 100 });
    const [call] = p.feed(line({ type: "assistant", message: { content: [{ type: "tool_use", id: "t", name: "Write", input: { content: "x".repeat(500) } }] } }));
    expect(call).toMatchObject({ type: "tool_call", name: "Write", inputCutBytes: 514 - 100 });
    expect(typeof (call as { input: unknown }).input).toBe("string");
  });

  it("codex: a long command output is cut too", () => {
    const p = new CodexStreamParser(codex, { maxToolResultBytes: 10 });
    const steps = p.feed(line({ type: "item.completed", item: { id: "i", type: "command_execution", command: "ls", aggregated_output: "0123456789abc", exit_code: 2, status: "failed" } }));
    expect(steps).toEqual([
      { type: "tool_call", id: "i", name: "exec", input: { command: "ls" }, inputCutBytes: 0 },
      { type: "tool_result", id: "i", name: null, output: "0123456789", cutBytes: 3, isError: true, exitCode: 2 },
    ]);
  });
});

describe("failures from the report", () => {
  const claudeResult = (extra: Record<string, unknown>) => {
    const p = new ClaudeStreamParser(claude);
    p.feed(line({ type: "result", subtype: "success", is_error: true, session_id: "s", ...extra }));
    return p.end({ code: 1, signal: null }).report.failure;
  };

  it.each([
    [{ api_error_status: 403, result: "API Error: 403 Forbidden" }, "AgentFailure", "authentication"],
    [{ api_error_status: 429, result: "API Error: Request rejected (429) · rate limited" }, "InfraFailure", "gateway_rate_limit"],
    [{ api_error_status: 500, result: "API Error: 500 Internal server error" }, "InfraFailure", "gateway_error"],
    [{ api_error_status: null, result: "API Error: 529 Overloaded" }, "InfraFailure", "gateway_rate_limit"],
    [{ api_error_status: null, result: "API Error: Connection error." }, "InfraFailure", "gateway_error"],
    [{ api_error_status: null, result: "Something else went wrong" }, "AgentFailure", "agent_exit"],
  ])("claude %j → %s %s", (extra, kind, category) => {
    const f = claudeResult(extra);
    expect(f).toMatchObject({ kind, category });
    expect(f!.message).toContain(extra.result);
  });

  it("claude: a run cut short after an API retry is classified by that error", () => {
    const p = new ClaudeStreamParser(claude);
    p.feed(line({ type: "system", subtype: "api_retry", attempt: 1, max_retries: 2, retry_delay_ms: 500, error_status: 503, error: "server_error" }));
    expect(p.end({ code: null, signal: "SIGTERM" }).report.failure).toMatchObject({ category: "gateway_error" });
  });

  it("a successful exit with no result and no error is no failure of the report", () => {
    const p = new ClaudeStreamParser(claude);
    expect(p.end({ code: 0, signal: null }).report).toEqual({ sessionId: null, finalText: null, usage: null, failure: null });
  });

  it("codex: turn.failed names the reason", () => {
    const p = new CodexStreamParser(codex);
    p.feed(line({ type: "turn.failed", error: { message: "unexpected status 503 Service Unavailable: overloaded" } }));
    expect(p.end({ code: 1, signal: null }).report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit" });
  });
});

describe("plain text and lines", () => {
  it("a command's output is its lines, by stream", () => {
    const p = new PlainTextParser();
    const steps = [...p.feed("one\ntw"), ...p.feed("o\r\n", "stdout"), ...p.feed("oops\n", "stderr"), ...p.feed("rest")];
    const end = p.end();
    expect([...steps, ...end.steps]).toEqual([
      { type: "output", stream: "stdout", text: "one" },
      { type: "output", stream: "stdout", text: "two" },
      { type: "output", stream: "stderr", text: "oops" },
      { type: "output", stream: "stdout", text: "rest" },
    ]);
    expect(end.report).toEqual({ sessionId: null, finalText: null, usage: null, failure: null });
  });

  it("a line longer than the limit is cut, and the rest of it dropped", () => {
    const s = new LineSplitter(10);
    expect(s.push("0123456789abc")).toEqual([{ text: "0123456789", cut: true }]);
    expect(s.push("def\nnext\n")).toEqual([{ text: "next", cut: false }]);
    expect(s.end()).toEqual([]);
  });
});
