import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codexAdapter } from "../../../lib/executor/adapters";
import { SESSION_DIRS } from "../../../lib/executor/agent-session";
import { startFakeOpenAi, type FakeOpenAi, type OpenAiTurn } from "../../support/fake-openai";
import { agent, CODEX_BIN, COMMIT_HELLO, makeSandbox, ofType, REAL_CLI_TIMEOUT_MS, runCli, type Sandbox } from "./real-cli";

/**
 * The real Codex CLI (@openai/codex, a dev dependency with its native binary) against the
 * scripted Responses API of test/support/fake-openai.ts, given as a model provider derived from
 * the roster's env OPENAI_BASE_URL; spawned plainly in a temp repository with a private HOME.
 */

const SECRETS = { OPENAI_API_KEY: "sk-test-openai-0123456789" };

let fake: FakeOpenAi | null = null;
let box: Sandbox | null = null;
afterEach(async () => {
  await fake?.close();
  box?.cleanup();
  fake = null;
  box = null;
});

async function setup(script: OpenAiTurn[]) {
  fake = await startFakeOpenAi(script);
  box = makeSandbox();
  const spec = agent({
    kind: "codex",
    command: [CODEX_BIN, "exec"],
    model: "gpt-5.5",
    env: { OPENAI_BASE_URL: fake.baseUrl },
    pricePerMillionInputUsd: 1.25,
    pricePerMillionOutputUsd: 10,
  });
  return { fake, box, spec };
}

describe("the real codex CLI through the codex adapter", { timeout: REAL_CLI_TIMEOUT_MS }, () => {
  it("runs a command that writes and commits a file; the parser yields the steps, the answer, the thread and usage priced from the roster", async () => {
    const { fake, box, spec } = await setup([
      { text: "I will add hello.txt.", exec: [COMMIT_HELLO] },
      { text: "Added hello.txt and committed it." },
    ]);
    const inv = codexAdapter.invocation(spec, { prompt: "Add hello.txt and commit it." });
    const run = await runCli(box, inv, codexAdapter.parser(spec, { model: inv.model }), { secrets: SECRETS, record: "codex-commit" });

    expect(run.code).toBe(0);
    expect(readFileSync(join(box.repo, "hello.txt"), "utf8")).toBe("hello\n");
    expect(box.git("log", "-1", "--format=%s")).toBe("Add hello.txt");

    const session = ofType(run.steps, "session")[0];
    expect(session?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(ofType(run.steps, "text").map((s) => s.text)).toEqual(["I will add hello.txt.", "Added hello.txt and committed it."]);
    const [call] = ofType(run.steps, "tool_call");
    expect(call!.name).toBe("exec");
    expect(JSON.stringify(call!.input)).toContain("git commit");
    const [result] = ofType(run.steps, "tool_result");
    expect(result).toMatchObject({ id: call!.id, isError: false, exitCode: 0, output: "committed\n" });
    expect(run.steps.filter((s) => s.type !== "output").at(-1)).toEqual({ type: "final", text: "Added hello.txt and committed it.", isError: false });

    // two requests of 2000 input (500 cached) and 100 output tokens each, as the fake scripted them
    expect(run.report).toEqual({
      sessionId: session!.sessionId,
      finalText: "Added hello.txt and committed it.",
      usage: {
        tokensIn: 4000,
        tokensOut: 200,
        cacheRead: 1000,
        cacheWrite: 0,
        costUsd: (4000 * 1.25 + 200 * 10) / 1_000_000,
        costExact: true,
        costSource: "roster_prices",
        turns: 1,
        durationMs: null,
        model: "gpt-5.5",
      },
      failure: null,
    });
    // the command's output went back to the model, and the model asked for is the roster's
    expect(JSON.stringify(fake.requests[1]!.body)).toContain("committed");
    expect((fake.requests[0]!.body as { model: string }).model).toBe("gpt-5.5");
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${SECRETS.OPENAI_API_KEY}`);
    expect(fake.unexpected).toEqual([]);
    expect(existsSync(join(box.home, ".codex"))).toBe(true);
  });

  it("a 401 ends as authentication, not retried, within seconds", async () => {
    const { box, spec, fake } = await setup(Array.from({ length: 6 }, () => ({ error: 401 })));
    const run = await runCli(box, codexAdapter.invocation(spec, { prompt: "Anything." }), codexAdapter.parser(spec), { secrets: SECRETS, record: "codex-401" });
    expect(run.code).not.toBe(0);
    expect(run.report.failure).toMatchObject({ kind: "AgentFailure", category: "authentication", retryable: false });
    expect(run.report.failure!.message).toContain("401");
    expect(run.durationMs).toBeLessThan(30_000);
    expect(fake.requests.length).toBeLessThanOrEqual(3);
  });

  it("a 529 is retried by the CLI and then succeeds", async () => {
    const { box, spec } = await setup([{ error: 529 }, { text: "Done after the overload." }]);
    const run = await runCli(box, codexAdapter.invocation(spec, { prompt: "Say done." }), codexAdapter.parser(spec), { secrets: SECRETS });
    expect(run.code).toBe(0);
    expect(run.report.failure).toBeNull();
    expect(run.report.finalText).toBe("Done after the overload.");
  });

  it("a 529 that outlasts the CLI's retries is an InfraFailure gateway_rate_limit, retryable", async () => {
    // codex retries both the request and the stream (each capped by the adapter): more than enough errors
    const { box, spec, fake } = await setup(Array.from({ length: 20 }, () => ({ error: 529 })));
    const run = await runCli(box, codexAdapter.invocation(spec, { prompt: "Say done." }), codexAdapter.parser(spec), { secrets: SECRETS, record: "codex-529-exhausted" });
    expect(run.code).not.toBe(0);
    expect(run.report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit", retryable: true });
    expect(run.report.failure!.message).toContain("529");
    expect(ofType(run.steps, "retry").every((s) => s.status === 529)).toBe(true);
    expect(fake.remaining()).toBeGreaterThan(0);
  });

  it("a 429 that outlasts the CLI's retries is gateway_rate_limit; a 500 is gateway_error", async () => {
    const limited = await setup(Array.from({ length: 20 }, () => ({ error: 429 })));
    const run = await runCli(limited.box, codexAdapter.invocation(limited.spec, { prompt: "x" }), codexAdapter.parser(limited.spec), { secrets: SECRETS, record: "codex-429-exhausted" });
    expect(run.report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_rate_limit", retryable: true });
    await fake!.close();
    box!.cleanup();

    const broken = await setup(Array.from({ length: 20 }, () => ({ error: 500 })));
    const failed = await runCli(broken.box, codexAdapter.invocation(broken.spec, { prompt: "x" }), codexAdapter.parser(broken.spec), { secrets: SECRETS, record: "codex-500-exhausted" });
    expect(failed.report.failure).toMatchObject({ kind: "InfraFailure", category: "gateway_error", retryable: true });
  });

  it("resumes a thread with codex exec resume: the earlier conversation is sent again", async () => {
    const { box, spec, fake } = await setup([{ text: "Remembered: tangerine." }, { text: "The word was tangerine." }]);
    const first = await runCli(box, codexAdapter.invocation(spec, { prompt: "Remember the word tangerine." }), codexAdapter.parser(spec), { secrets: SECRETS });
    const threadId = first.report.sessionId!;
    // where the worker keeps a session from, for the next Attempt (lib/executor/agent-session.ts)
    expect(existsSync(join(box.home, SESSION_DIRS.codex!))).toBe(true);
    const inv = codexAdapter.invocation(spec, { prompt: "Which word?", resumeSession: threadId });
    expect(inv.args.slice(0, 2)).toEqual(["exec", "resume"]);
    expect(inv.args.slice(-2)).toEqual([threadId, "-"]);
    const second = await runCli(box, inv, codexAdapter.parser(spec), { secrets: SECRETS });
    expect(second.code).toBe(0);
    expect(second.report.finalText).toBe("The word was tangerine.");
    const sent = JSON.stringify(fake.requests.at(-1)!.body);
    expect(sent).toContain("Remember the word tangerine.");
    expect(sent).toContain("Which word?");
  });
});
