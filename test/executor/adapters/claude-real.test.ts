import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { claudeAdapter, claudeUserMessage } from "../../../lib/executor/adapters";
import { startFakeAnthropic, type AnthropicTurn, type FakeAnthropic } from "../../support/fake-anthropic";
import { agent, CLAUDE_BIN, COMMIT_HELLO, makeSandbox, ofType, REAL_CLI_TIMEOUT_MS, runCli, type Sandbox } from "./real-cli";

/**
 * The real Claude Code CLI (@anthropic-ai/claude-code, a dev dependency) against the scripted
 * Messages API of test/support/fake-anthropic.ts, spawned plainly in a temp repository with a
 * private HOME; its output read by the claude adapter.
 */

const SECRETS = { ANTHROPIC_API_KEY: "sk-ant-test-key-0123456789" };

let fake: FakeAnthropic | null = null;
let box: Sandbox | null = null;
afterEach(async () => {
  await fake?.close();
  box?.cleanup();
  fake = null;
  box = null;
});

async function setup(script: AnthropicTurn[], overrides: Parameters<typeof agent>[0] extends infer A ? Partial<A> : never = {}) {
  fake = await startFakeAnthropic(script);
  box = makeSandbox();
  const spec = agent({
    kind: "claude",
    command: [CLAUDE_BIN],
    model: "claude-sonnet-4-5",
    ...overrides,
    env: { ANTHROPIC_BASE_URL: fake.url, ...overrides.env },
  });
  return { fake, box, spec };
}

describe("the real claude CLI through the claude adapter", { timeout: REAL_CLI_TIMEOUT_MS }, () => {
  it("runs a tool that writes and commits a file; the parser yields the steps, the answer, the session and the exact usage", async () => {
    const { fake, box, spec } = await setup([
      { text: "I will add hello.txt.", tools: [{ name: "Bash", input: { command: COMMIT_HELLO, description: "Write and commit hello.txt" } }] },
      { text: "Added hello.txt and committed it." },
    ]);
    const inv = claudeAdapter.invocation(spec, { prompt: "Add hello.txt and commit it." });
    const run = await runCli(box, inv, claudeAdapter.parser(spec, { model: inv.model }), { secrets: SECRETS, record: "claude-commit" });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(readFileSync(join(box.repo, "hello.txt"), "utf8")).toBe("hello\n");
    expect(box.git("log", "-1", "--format=%s")).toBe("Add hello.txt");

    const session = ofType(run.steps, "session")[0];
    expect(session?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(session?.model).toBe("claude-sonnet-4-5");
    expect(ofType(run.steps, "text").map((s) => s.text)).toEqual(["I will add hello.txt.", "Added hello.txt and committed it."]);
    const [call] = ofType(run.steps, "tool_call");
    expect(call).toMatchObject({ name: "Bash", input: { command: COMMIT_HELLO }, inputCutBytes: 0 });
    const [result] = ofType(run.steps, "tool_result");
    expect(result).toMatchObject({ id: call!.id, name: "Bash", isError: false, cutBytes: 0 });
    expect(result!.output).toContain("committed");
    expect(run.steps.at(-1)).toEqual({ type: "final", text: "Added hello.txt and committed it.", isError: false });

    // the result line, as the CLI printed it
    const resultLine = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { total_cost_usd: number; session_id: string };
    expect(run.report).toEqual({
      sessionId: session!.sessionId,
      finalText: "Added hello.txt and committed it.",
      usage: {
        tokensIn: 2 * 1200,
        tokensOut: 2 * 80,
        cacheRead: 2 * 500,
        cacheWrite: 2 * 300,
        costUsd: resultLine.total_cost_usd,
        costExact: true,
        costSource: "agent",
        turns: 2,
        durationMs: expect.any(Number),
        model: "claude-sonnet-4-5",
      },
      failure: null,
    });
    expect(resultLine.session_id).toBe(session!.sessionId);
    expect(run.report.usage!.costUsd).toBeGreaterThan(0);

    // the tool's result went back to the model in the next request
    const second = fake.loopRequests()[1]!.body as { messages: { content: unknown }[] };
    expect(JSON.stringify(second.messages.at(-1))).toContain(`"tool_use_id":"${call!.id}"`);
    expect(fake.unexpected).toEqual([]);
    // the model and the key reached the API as the roster says
    expect((fake.loopRequests()[0]!.body as { model: string }).model).toBe("claude-sonnet-4-5");
    expect(fake.loopRequests()[0]!.headers["x-api-key"]).toBe(SECRETS.ANTHROPIC_API_KEY);
    // it keeps its session under the private HOME
    expect(existsSync(join(box.home, ".claude"))).toBe(true);
  });

  it("a 401 ends as authentication, not retried, within seconds, with the agent's own sentence", async () => {
    const { box, spec, fake } = await setup([{ error: 401 }, { error: 401 }, { error: 401 }, { error: 401 }, { error: 401 }]);
    const inv = claudeAdapter.invocation(spec, { prompt: "Anything." });
    const run = await runCli(box, inv, claudeAdapter.parser(spec), { secrets: SECRETS, record: "claude-401" });
    expect(run.code).toBe(1);
    expect(run.report.failure).toMatchObject({ kind: "AgentFailure", category: "authentication", retryable: false });
    expect(run.report.failure!.message).toContain("Invalid API key");
    expect(run.report.finalText).toBeNull();
    expect(run.durationMs).toBeLessThan(30_000);
    // the CLI's own retries are capped (CLAUDE_CODE_MAX_RETRIES)
    expect(fake.loopRequests().length).toBeLessThanOrEqual(1 + Number(inv.env.CLAUDE_CODE_MAX_RETRIES));
  });

  it("a 529 is retried by the CLI (a retry step) and then succeeds", async () => {
    const { box, spec } = await setup([{ error: 529 }, { text: "Done after the overload." }]);
    const inv = claudeAdapter.invocation(spec, { prompt: "Say done." });
    const run = await runCli(box, inv, claudeAdapter.parser(spec), { secrets: SECRETS, record: "claude-529-then-ok" });
    expect(run.code).toBe(0);
    expect(ofType(run.steps, "retry")[0]).toMatchObject({ status: 529 });
    expect(run.report.failure).toBeNull();
    expect(run.report.finalText).toBe("Done after the overload.");
  });

  it("a 529 that outlasts the CLI's retries is an InfraFailure gateway_rate_limit, retryable", async () => {
    const { box, spec } = await setup([{ error: 529 }, { error: 529 }], { env: { CLAUDE_CODE_MAX_RETRIES: "0" } });
    const inv = claudeAdapter.invocation(spec, { prompt: "Say done." });
    expect(inv.env.CLAUDE_CODE_MAX_RETRIES).toBe("0");
    const run = await runCli(box, inv, claudeAdapter.parser(spec), { secrets: SECRETS, record: "claude-529-exhausted" });
    expect(run.code).toBe(1);
    expect(run.report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit", retryable: true });
    expect(run.report.failure!.message).toMatch(/529|overloaded/i);
  });

  it("a 429 is retried by the CLI; one that outlasts its retries is gateway_rate_limit", async () => {
    const { box, spec } = await setup([{ error: 429 }, { text: "Done after the rate limit." }]);
    const ok = await runCli(box, claudeAdapter.invocation(spec, { prompt: "Say done." }), claudeAdapter.parser(spec), { secrets: SECRETS });
    expect(ofType(ok.steps, "retry")[0]).toMatchObject({ status: 429 });
    expect(ok.report).toMatchObject({ finalText: "Done after the rate limit.", failure: null });

    await fake!.close();
    fake = await startFakeAnthropic([{ error: 429 }]);
    const limited = { ...spec, env: { ANTHROPIC_BASE_URL: fake.url, CLAUDE_CODE_MAX_RETRIES: "0" } };
    const run = await runCli(box, claudeAdapter.invocation(limited, { prompt: "Say done." }), claudeAdapter.parser(limited), { secrets: SECRETS, record: "claude-429-exhausted" });
    expect(run.report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit", retryable: true });
  });

  it("passes the roster's tools and MCP config: a disallowed tool is not offered to the model, the MCP server is started", async () => {
    const mcp = JSON.stringify({ mcpServers: { atelierprobe: { command: "/bin/false", args: [] } } });
    const { box, spec, fake } = await setup([{ text: "ok" }], { disallowedTools: ["Write", "WebFetch"], allowedTools: ["Bash(git:*)", "Edit"], mcpConfig: mcp });
    const run = await runCli(box, claudeAdapter.invocation(spec, { prompt: "x" }), claudeAdapter.parser(spec), { secrets: SECRETS });
    expect(run.code).toBe(0);
    const offered = (fake.loopRequests()[0]!.body as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(offered).toContain("Bash");
    expect(offered).not.toContain("Write");
    expect(offered).not.toContain("WebFetch");
    const init = JSON.parse(run.stdout.split("\n")[0]!) as { mcp_servers: { name: string }[] };
    expect(init.mcp_servers.map((s) => s.name)).toEqual(["atelierprobe"]);
  });

  it("a repository's .mcp.json is not started: MCP servers come from the roster only", async () => {
    const { box, spec } = await setup([{ text: "ok" }]);
    writeFileSync(join(box.repo, ".mcp.json"), JSON.stringify({ mcpServers: { fromrepo: { command: "/bin/true" } } }));
    const run = await runCli(box, claudeAdapter.invocation(spec, { prompt: "x" }), claudeAdapter.parser(spec), { secrets: SECRETS });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout.split("\n")[0]!) as { mcp_servers: unknown[] }).mcp_servers).toEqual([]);
  });

  it("max_turns ends as step_limit", async () => {
    const tool = { name: "Bash", input: { command: "echo again", description: "again" } };
    const { box, spec } = await setup([{ tools: [tool] }, { tools: [tool] }, { tools: [tool] }, { text: "never" }], { maxTurns: 1 });
    const inv = claudeAdapter.invocation(spec, { prompt: "Loop." });
    expect(inv.args).toContain("--max-turns");
    const run = await runCli(box, inv, claudeAdapter.parser(spec), { secrets: SECRETS, record: "claude-max-turns" });
    expect(run.report.failure).toMatchObject({ category: "step_limit", retryable: false });
  });

  it("with intervene, stdin is a stream of JSON user messages: an intervention is answered, and closing stdin ends the CLI", async () => {
    const { box, spec, fake } = await setup([{ text: "First answer." }, { text: "Answer to the intervention." }], { intervene: true });
    const inv = claudeAdapter.invocation(spec, { prompt: "First question." });
    expect(inv.stdin.close).toBe(false);
    let finals = 0;
    const parser = claudeAdapter.parser(spec);
    const run = await runCli(box, inv, parser, {
      secrets: SECRETS,
      record: "claude-intervene",
      onStep: (step, stdin) => {
        if (step.type !== "final") return;
        finals++;
        // the operator speaks once (the parser then takes one more result); after the next answer the executor closes stdin
        if (finals === 1) {
          parser.messageSent?.();
          stdin.write(inv.encodeIntervention!("Please also say goodbye."));
        } else stdin.end();
      },
    });
    expect(run.code).toBe(0);
    expect(ofType(run.steps, "final").map((s) => s.text)).toEqual(["First answer.", "Answer to the intervention."]);
    expect(run.report.finalText).toBe("Answer to the intervention.");
    // a result per message: tokens and turns add up, the cost is the process's total so far
    const results = run.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; total_cost_usd?: number }).filter((o) => o.type === "result");
    expect(results).toHaveLength(2);
    expect(run.report.usage).toMatchObject({ tokensIn: 2 * 1200, tokensOut: 2 * 80, cacheRead: 2 * 500, cacheWrite: 2 * 300, turns: 2, costUsd: results[1]!.total_cost_usd });
    expect(results[1]!.total_cost_usd).toBeGreaterThan(results[0]!.total_cost_usd!);
    expect(JSON.stringify(fake.loopRequests()[1]!.body)).toContain("Please also say goodbye.");
    expect(claudeUserMessage("x")).toBe('{"type":"user","message":{"role":"user","content":[{"type":"text","text":"x"}]}}\n');
  });

  it("resumes a session with --resume: the earlier conversation is sent again", async () => {
    const { box, spec, fake } = await setup([{ text: "Remembered: the word is tangerine." }, { text: "The word was tangerine." }]);
    const first = await runCli(box, claudeAdapter.invocation(spec, { prompt: "Remember the word tangerine." }), claudeAdapter.parser(spec), { secrets: SECRETS });
    const sessionId = first.report.sessionId!;
    const inv = claudeAdapter.invocation(spec, { prompt: "Which word?", resumeSession: sessionId });
    expect(inv.args.slice(-2)).toEqual(["--resume", sessionId]);
    const second = await runCli(box, inv, claudeAdapter.parser(spec), { secrets: SECRETS });
    expect(second.code).toBe(0);
    expect(second.report.sessionId).toBeTruthy();
    const sent = JSON.stringify(fake.loopRequests().at(-1)!.body);
    expect(sent).toContain("Remember the word tangerine.");
    expect(sent).toContain("Which word?");
  });
});

describe("a hanging model API", { timeout: REAL_CLI_TIMEOUT_MS }, () => {
  it("leaves the stop to the executor's limit: a killed CLI reports its session but no failure of its own", async () => {
    const { box, spec, fake } = await setup([{ hang: true }]);
    // the limit falls once the CLI waits on the model (on a busy machine it may take seconds to get there)
    const waiting = vi.waitFor(() => expect(fake.loopRequests()).toHaveLength(1), { timeout: REAL_CLI_TIMEOUT_MS, interval: 100 });
    const run = await runCli(box, claudeAdapter.invocation(spec, { prompt: "Hang." }), claudeAdapter.parser(spec), { secrets: SECRETS, killWhen: waiting });
    expect(run.signal).toBe("SIGKILL");
    expect(fake.loopRequests()).toHaveLength(1);
    expect(run.report).toMatchObject({ finalText: null, usage: null, failure: null });
    expect(run.report.sessionId).toBeTruthy();
  });
});
