import { afterEach, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { claudeAdapter, codexAdapter, type AdapterAgent } from "../../../lib/executor/adapters";
import { startLocalBroker, type LocalBroker } from "../../../lib/executor/agent-sandbox/api-broker";
import { canAutoRetry } from "../../../lib/engine/retry";
import type { Failure } from "../../../lib/engine/failure";
import { startFakeAnthropic, type AnthropicTurn } from "../../support/fake-anthropic";
import { startFakeOpenAi, type OpenAiTurn } from "../../support/fake-openai";
import { freePort } from "../../support/free-port";
import { agent, CLAUDE_BIN, CODEX_BIN, makeSandbox, REAL_CLI_TIMEOUT_MS, runCli, type Sandbox } from "./real-cli";

/**
 * Each failure category of an agent's run, produced by the real Claude Code or Codex CLI from
 * what a scripted model API (or the gateway in front of it) answers, and read by its adapter:
 * `retryable` is what the reference says of the category, and it is exactly whether Atelier
 * retries the Attempt by itself (canAutoRetry, the one predicate of both).
 */

const SECRETS = { ANTHROPIC_API_KEY: "sk-ant-test-key-0123456789", OPENAI_API_KEY: "sk-test-0123456789" };
const FAKE_MCP = fileURLToPath(new URL("../../support/fake-mcp-server.mjs", import.meta.url));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function sandbox(): Sandbox {
  const box = makeSandbox();
  cleanups.push(() => box.cleanup());
  return box;
}

async function claude(script: AnthropicTurn[], overrides: Partial<AdapterAgent> = {}, opts: { knownModels?: string[]; baseUrl?: string } = {}): Promise<Failure | null> {
  const fake = await startFakeAnthropic(script, { knownModels: opts.knownModels });
  cleanups.push(() => fake.close());
  const spec = agent({ kind: "claude", command: [CLAUDE_BIN], model: "claude-sonnet-4-5", ...overrides, env: { ANTHROPIC_BASE_URL: opts.baseUrl ?? fake.url, CLAUDE_CODE_MAX_RETRIES: "0" } });
  const run = await runCli(sandbox(), claudeAdapter.invocation(spec, { prompt: "Do the task." }), claudeAdapter.parser(spec), { secrets: SECRETS });
  return run.report.failure;
}

async function codex(script: OpenAiTurn[], overrides: Partial<AdapterAgent> = {}, opts: { knownModels?: string[] } = {}): Promise<Failure | null> {
  const fake = await startFakeOpenAi(script, { knownModels: opts.knownModels });
  cleanups.push(() => fake.close());
  const spec = agent({ kind: "codex", command: [CODEX_BIN, "exec"], model: "gpt-5.5", ...overrides, env: { OPENAI_BASE_URL: fake.baseUrl } });
  const run = await runCli(sandbox(), codexAdapter.invocation(spec, { prompt: "Do the task." }), codexAdapter.parser(spec), { secrets: SECRETS });
  return run.report.failure;
}

/** The category, its flag, and the retry that follows it agree. */
function expectCategory(f: Failure | null, category: string, retryable: boolean): void {
  expect(f).toMatchObject({ category, retryable });
  expect(canAutoRetry(f!, 1)).toBe(retryable);
}

describe("failure categories from the real CLIs", { timeout: REAL_CLI_TIMEOUT_MS }, () => {
  it("invalid_model: a model the API does not know (404 not_found / model_not_found), from both CLIs; not retried", async () => {
    const fromClaude = await claude([{ text: "never" }], { model: "claude-nope" }, { knownModels: ["claude-sonnet-4-5"] });
    expectCategory(fromClaude, "invalid_model", false);
    expect(fromClaude!.message).toContain("claude-nope");
    const fromCodex = await codex([{ text: "never" }], { model: "gpt-nope" }, { knownModels: ["gpt-5.5"] });
    expectCategory(fromCodex, "invalid_model", false);
    expect(fromCodex!.message).toContain("gpt-nope");
  });

  it("gateway_timeout: a 504 from the model API, from both CLIs; retried", async () => {
    expectCategory(await claude([{ error: 504 }, { error: 504 }]), "gateway_timeout", true);
    expectCategory(await codex(Array.from({ length: 20 }, () => ({ error: 504 }))), "gateway_timeout", true);
  });

  it("gateway_error: the gateway answers 502 when the model API cannot be reached; retried", async () => {
    // the project's gateway, in front of a model API that is down
    const deadPort = await freePort();
    const broker: LocalBroker = await startLocalBroker([{ url: `http://127.0.0.1:${deadPort}`, header: "x-api-key", value: "sk-real", protocol: "anthropic" }]);
    cleanups.push(() => broker.close());
    expectCategory(await claude([], {}, { baseUrl: broker.urls[0] }), "gateway_error", true);
  });

  it("gateway_rate_limit: a 429 from the model API; retried", async () => {
    expectCategory(await claude([{ error: 429 }, { error: 429 }]), "gateway_rate_limit", true);
  });

  it("tool_denied: the model asks for a tool the roster's disallowed_tools takes away; not retried", async () => {
    const f = await claude([{ tools: [{ name: "Write", input: { file_path: "notes.txt", content: "x" } }] }, { text: "done" }], { disallowedTools: ["Write"] });
    expectCategory(f, "tool_denied", false);
    expect(f!.message).toContain("Write");
  });

  it("mcp_discovery: an MCP server of mcp_config does not start; not retried", async () => {
    const mcp = JSON.stringify({ mcpServers: { probe: { command: "/bin/false", args: [] } } });
    const f = await claude([{ text: "done" }], { mcpConfig: mcp });
    expectCategory(f, "mcp_discovery", false);
    expect(f!.message).toContain("probe");
  });

  it("mcp_transport: an MCP server goes away during a call; retried", async () => {
    const mcp = JSON.stringify({ mcpServers: { probe: { command: process.execPath, args: [FAKE_MCP] } } });
    const f = await claude([{ tools: [{ name: "mcp__probe__ping", input: {} }] }, { text: "done" }], { mcpConfig: mcp });
    expectCategory(f, "mcp_transport", true);
  });

  it("budget: the agent spends its max_budget_usd (a BudgetFailure); not retried", async () => {
    const tool = { name: "Bash", input: { command: "echo again", description: "again" } };
    const f = await claude([{ tools: [tool] }, { tools: [tool] }, { tools: [tool] }, { text: "never" }], { maxBudgetUsd: 0.001 });
    expect(f).toMatchObject({ kind: "BudgetFailure" });
    expectCategory(f, "budget", false);
  });
});
