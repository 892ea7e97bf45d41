import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { decodeStep } from "../../lib/executor/adapters";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt } from "../../lib/executor/execute-attempt";
import { pidsWithArgument } from "../support/processes";
import { startFakeAnthropic, type AnthropicTurn, type FakeAnthropic } from "../support/fake-anthropic";
import { agent, CLAUDE_BIN, COMMIT_HELLO } from "./adapters/real-cli";
import { makeRemote, remoteSha, sh, type RemoteFixture } from "./git-fixture";

/**
 * The real Claude Code CLI as Atelier runs it: through the executor, in its sandbox, its model
 * API a scripted fake on a loopback port that the roster's egress lists. Its binary lives in
 * node_modules, outside /usr, so the roster binds its package read-only.
 */

const CLAUDE = realpathSync(CLAUDE_BIN);
const PACKAGE = dirname(dirname(CLAUDE));
const KEY = "sk-ant-api03-sandboxed-test-key-0123456789";

let fx: RemoteFixture;
let fake: FakeAnthropic | null = null;
beforeAll(() => {
  fx = makeRemote();
});
afterAll(() => fx.cleanup());
afterEach(async () => {
  await fake?.close();
  fake = null;
});

async function claudeAttempt(
  script: AnthropicTurn[],
  attemptId: string,
  opts: { prompt?: string; resumeSession?: string | null; model?: string; minutes?: number } = {},
) {
  await fake?.close();
  fake = await startFakeAnthropic(script);
  const port = Number(new URL(fake.url).port);
  const spec: NamedAgentSpec = {
    name: "claude",
    command: [CLAUDE],
    secrets: ["ANTHROPIC_API_KEY"],
    read_only_paths: [PACKAGE],
    egress: [`127.0.0.1:${port}`],
    max_attempt_minutes: opts.minutes ?? 3,
    price_per_minute_usd: 0.01,
    adapter: agent({ kind: "claude", command: [CLAUDE], model: "claude-sonnet-4-5", models: ["claude-haiku-4-5"], env: { ANTHROPIC_BASE_URL: fake.url } }),
  };
  const out: OutputEntry[] = [];
  const outcome = await executeAttempt(
    {
      runId: attemptId.split("/")[0]!,
      attemptId,
      loop: "start-dev",
      repo: "acme/widgets",
      number: 21,
      prompt: opts.prompt ?? "Add hello.txt and commit it.",
      agent: spec,
      cloneUrl: fx.url,
      token: "ghs_RealAgentToken0123456789abcdefghijklmn",
      defaultBranch: "main",
      branch: `atelier/start-dev/${attemptId.split("/")[0]}`,
      workspaceRoot: fx.root,
      resumeSession: opts.resumeSession ?? null,
      model: opts.model ?? null,
    },
    { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ANTHROPIC_API_KEY: KEY } },
  );
  return { outcome, out, steps: out.map(decodeStep).filter((s) => s !== null) };
}

describe("the real claude CLI in its sandbox", () => {
  it("writes and commits through its tool; the PR's text is its final answer, the usage the exact one it reported", async () => {
    const { outcome, out, steps } = await claudeAttempt(
      [
        { text: "I will add hello.txt.", tools: [{ name: "Bash", input: { command: COMMIT_HELLO, description: "Write and commit hello.txt" } }] },
        { text: "Added hello.txt and committed it." },
      ],
      "realclaude/agent/1",
    );
    expect(outcome.tag, out.map((e) => `[${e.stream}] ${e.text}`).join("\n")).toBe("Succeeded");
    if (outcome.tag !== "Succeeded") return;
    const head = remoteSha(fx.remote, "atelier/start-dev/realclaude")!;
    expect(sh(fx.remote, "show", `${head}:hello.txt`)).toBe("hello");
    expect(outcome.harvest.commits.map((c) => c.subject)).toContain("Add hello.txt");
    expect(outcome.summary).toBe("Added hello.txt and committed it.");
    expect(outcome.usage.costEstimated).toBe(false);
    expect(outcome.usage.tokensIn).toBeGreaterThan(0);
    expect(outcome.usage.costUsd).toBeGreaterThan(0);
    // what the Attempt keeps of the agent's report: its session, model and turns, the cost exact
    expect(outcome.usage).toMatchObject({ costExact: true, model: "claude-sonnet-4-5", turns: 2 });
    expect(outcome.usage.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(steps.map((s) => s.type)).toEqual(expect.arrayContaining(["session", "text", "tool_call", "tool_result", "final"]));
    expect(JSON.stringify(out)).not.toContain(KEY);
  }, 120_000);

  it("an operator's retry resumes the session: the next Attempt's requests carry the earlier conversation", async () => {
    const first = await claudeAttempt([{ text: "The answer is 42, remember it." }], "realresume/agent/1", { prompt: "What is the answer?" });
    expect(first.outcome.tag, first.out.map((e) => `[${e.stream}] ${e.text}`).join("\n")).toBe("Succeeded");
    const session = first.outcome.usage.sessionId;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);

    const second = await claudeAttempt([{ text: "It was 42." }], "realresume/agent/2", { prompt: "What did you say the answer was?", resumeSession: session });
    expect(second.outcome.tag, second.out.map((e) => `[${e.stream}] ${e.text}`).join("\n")).toBe("Succeeded");
    expect(second.out.filter((e) => e.stream === "system").map((e) => e.text)).toContain(`resuming the agent's session ${session}`);
    const conversation = JSON.stringify(fake!.loopRequests().at(-1)!.body);
    expect(conversation).toContain("What is the answer?");
    expect(conversation).toContain("The answer is 42, remember it.");
    expect(conversation).toContain("What did you say the answer was?");
  }, 120_000);

  it("a retry whose session this worker did not keep starts a new conversation, and says so", async () => {
    const { outcome, out } = await claudeAttempt([{ text: "Fresh start." }], "realnosession/agent/2", {
      prompt: "Go on.",
      resumeSession: "00000000-0000-4000-8000-000000000000",
    });
    expect(outcome.tag).toBe("Succeeded");
    expect(out.map((e) => e.text)).toContain("the agent's session 00000000-0000-4000-8000-000000000000 is not kept on this worker; the agent starts a new one");
    expect(JSON.stringify(fake!.loopRequests().at(-1)!.body)).not.toContain("Add hello.txt");
  }, 120_000);

  it("runs the model the Run's Loop picked among the agent's models", async () => {
    const { outcome } = await claudeAttempt([{ text: "Done with haiku." }], "realmodel/agent/1", { prompt: "Say done.", model: "claude-haiku-4-5" });
    expect(outcome.tag).toBe("Succeeded");
    expect((fake!.loopRequests().at(-1)!.body as { model: string }).model).toBe("claude-haiku-4-5");
    expect(outcome.usage.model).toBe("claude-haiku-4-5");
  }, 120_000);

  it("a 401 from the model API ends as an authentication failure, not retried", async () => {
    const { outcome } = await claudeAttempt([{ error: 401 }, { error: 401 }, { error: 401 }, { error: 401 }, { error: 401 }], "claude401/agent/1");
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ category: "authentication", retryable: false });
  }, 120_000);

  it("a model that never answers ends as a timeout at the agent's limit, with no process left", async () => {
    const { outcome } = await claudeAttempt([{ hang: true }, { hang: true }, { hang: true }], "claudehang/agent/1", { minutes: 0.1 });
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "RunawayFailure", category: "timeout" });
    expect(pidsWithArgument(CLAUDE)).toEqual([]);
  }, 120_000);
});
