import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { decodeStep } from "../../lib/executor/adapters";
import { PLACEHOLDER_KEY } from "../../lib/executor/agent-sandbox/api-broker";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt, type AttemptInput } from "../../lib/executor/execute-attempt";
import type { AttemptSessions } from "../../lib/executor/agent-session";
import { attemptSessions, type SessionBlobStore } from "../../lib/runner/kept-sessions";
import type { StoredSessionBlob } from "../../lib/store/runs/agent-sessions";
import { attemptPidsWithArgument } from "../support/processes";
import { DEFAULT_TURN_USAGE, startFakeAnthropic, type AnthropicTurn, type FakeAnthropic } from "../support/fake-anthropic";
import { DEFAULT_OPENAI_USAGE, startFakeOpenAi, type FakeOpenAi } from "../support/fake-openai";
import { agent, CLAUDE_BIN, CODEX_BIN, COMMIT_HELLO } from "./adapters/real-cli";
import { attemptOn, makeRemote, remoteSha, sh, type RemoteFixture } from "./git-fixture";

/**
 * The real Claude Code and Codex CLIs as Atelier runs them: through the executor, in their
 * sandbox, their model API a scripted fake on a loopback port, brokered by the egress gateway:
 * the CLI gets a local base URL and a placeholder key, the gateway adds the instance's key and
 * reads the usage from the answers. Their binaries live in node_modules, outside /usr, so the
 * roster binds their packages read-only.
 */

const CLAUDE = realpathSync(CLAUDE_BIN);
const PACKAGE = dirname(dirname(CLAUDE));
const CODEX = realpathSync(CODEX_BIN);
/** @openai/codex and its native binary's package, beside it. */
const CODEX_PACKAGES = dirname(dirname(dirname(CODEX)));
const KEY = "sk-ant-api03-sandboxed-test-key-0123456789";
const OPENAI_KEY = "sk-proj-sandboxed-openai-key-0123456789";
const PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
/** What one scripted loop turn costs at PRICES. */
const TURN_COST = (DEFAULT_TURN_USAGE.input_tokens * 3 + DEFAULT_TURN_USAGE.cache_read_input_tokens * 0.3 + DEFAULT_TURN_USAGE.cache_creation_input_tokens * 3.75 + DEFAULT_TURN_USAGE.output_tokens * 15) / 1e6;
const TURN_TOKENS_IN = DEFAULT_TURN_USAGE.input_tokens + DEFAULT_TURN_USAGE.cache_read_input_tokens + DEFAULT_TURN_USAGE.cache_creation_input_tokens;

const transcript = (out: OutputEntry[]) => out.map((e) => `[${e.stream}] ${e.text}`).join("\n");

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
  opts: { prompt?: string; resumeSession?: string | null; model?: string; minutes?: number; sessions?: AttemptSessions } = {},
) {
  await fake?.close();
  fake = await startFakeAnthropic(script);
  const spec: NamedAgentSpec = {
    name: "claude",
    command: [CLAUDE],
    // the gateway holds the key and forwards to the fake (plain HTTP on loopback: the roster's URL says so)
    model_api: { url: fake.url, secret: "ANTHROPIC_API_KEY", protocol: "anthropic" },
    token_prices: PRICES,
    read_only_paths: [PACKAGE],
    // another host: the proxy variables are set, and the CLI still reaches the gateway's local URL directly (NO_PROXY)
    egress: ["registry.npmjs.org"],
    max_attempt_minutes: opts.minutes ?? 3,
    price_per_minute_usd: 0.01,
    adapter: agent({ kind: "claude", command: [CLAUDE], model: "claude-sonnet-4-5", models: ["claude-haiku-4-5"] }),
  };
  return attempt(spec, attemptId, opts);
}

async function attempt(spec: NamedAgentSpec, attemptId: string, opts: Partial<Pick<AttemptInput, "prompt" | "resumeSession" | "model" | "sessions">>) {
  const out: OutputEntry[] = [];
  const outcome = await executeAttempt(
    attemptOn(fx, attemptId, spec, {
      prompt: opts.prompt ?? "Add hello.txt and commit it.",
      resumeSession: opts.resumeSession ?? null,
      model: opts.model ?? null,
      ...(opts.sessions ? { sessions: opts.sessions } : {}),
    }),
    { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: OPENAI_KEY } },
  );
  return { outcome, out, steps: out.map(decodeStep).filter((s) => s !== null) };
}

/**
 * A shell command a steered agent runs: everything of its sandbox's environment and files —
 * every process's environment and command line, every file of its home, /tmp and /atelier —
 * reversed and base64-encoded (redaction never reads a commit), committed as leak.txt.
 */
const COMMIT_EVERYTHING =
  "{ env; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done; find /home/agent /tmp /atelier /workspace -path /workspace/.git -prune -o -type f -size -2M -print0 | xargs -0 cat; } 2>/dev/null | rev | base64 -w0 > leak.txt && git add leak.txt && git commit -q -m 'Add notes' && echo committed";

const decodeLeak = (branch: string) => [...Buffer.from(sh(fx.remote, "show", `${remoteSha(fx.remote, branch)}:leak.txt`), "base64").toString("utf8")].reverse().join("");

describe("the real claude CLI in its sandbox", () => {
  it("writes and commits through its tool; the PR's text is its final answer, the usage the exact one it reported", async () => {
    const { outcome, out, steps } = await claudeAttempt(
      [
        { text: "I will add hello.txt.", tools: [{ name: "Bash", input: { command: COMMIT_HELLO, description: "Write and commit hello.txt" } }] },
        { text: "Added hello.txt and committed it." },
      ],
      "realclaude/agent/1",
    );
    expect(outcome.tag, transcript(out)).toBe("Succeeded");
    if (outcome.tag !== "Succeeded") return;
    const head = remoteSha(fx.remote, "atelier/start-dev/realclaude")!;
    expect(sh(fx.remote, "show", `${head}:hello.txt`)).toBe("hello");
    expect(outcome.harvest.commits.map((c) => c.subject)).toContain("Add hello.txt");
    expect(outcome.summary).toBe("Added hello.txt and committed it.");
    // the model API saw the instance's key, which the agent never held, on every request
    expect(fake!.requests.length).toBeGreaterThan(0);
    for (const r of fake!.requests) expect(r.headers).toMatchObject({ "x-api-key": KEY, host: new URL(fake!.url).host });
    // the usage is what the gateway read of the model API's answers, priced from the roster
    expect(outcome.usage).toMatchObject({ costExact: true, costEstimated: false, model: "claude-sonnet-4-5", turns: 2, tokensIn: 2 * TURN_TOKENS_IN, tokensOut: 2 * DEFAULT_TURN_USAGE.output_tokens });
    expect(outcome.usage.costUsd).toBeCloseTo(2 * TURN_COST, 9);
    expect(out.map((e) => e.text)).toContain(
      `the gateway read 2 model answers: ${2 * TURN_TOKENS_IN} tokens in (${2 * DEFAULT_TURN_USAGE.cache_read_input_tokens} from cache), 160 out = $${outcome.usage.costUsd} at the roster's prices; the agent reported $${outcome.usage.costUsd}, 160 tokens out`,
    );
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

  it("attack: a session sealed for another Run, put under this Run's id, is refused and never restored", async () => {
    // the kept blobs as Postgres holds them, sealed with the instance key for their Run (lib/runner/kept-sessions.ts)
    const blobs = new Map<string, StoredSessionBlob>();
    const store: SessionBlobStore = {
      put: async (w, meta, blob) => (blobs.set(w.runId, { attemptId: w.attemptId, kind: meta.kind, sessionId: meta.sessionId, blob }), true),
      get: async (runId) => blobs.get(runId) ?? null,
    };
    const sessionsFor = (runId: string, n: number) => attemptSessions(store, "instance-key", { runId, attemptId: `${runId}/agent/${n}`, leaseToken: "t" }, null, async () => undefined);
    const victim = await claudeAttempt([{ text: "The secret word is avocado." }], "realsealed/agent/1", { prompt: "Remember the word.", sessions: sessionsFor("realsealed", 1) });
    expect(victim.outcome.tag).toBe("Succeeded");
    const session = victim.outcome.usage.sessionId!;
    // the attacker's Run gets the victim's blob, and the victim's session id, under its own Run id
    blobs.set("realattacker", blobs.get("realsealed")!);
    const { outcome, out } = await claudeAttempt([{ text: "I know no word." }], "realattacker/agent/2", {
      prompt: "What was the word?",
      resumeSession: session,
      sessions: sessionsFor("realattacker", 2),
    });
    expect(outcome.tag).toBe("Succeeded");
    expect(out.map((e) => e.text)).toContain(
      "the kept session of this Run was refused: it does not open for this Run with this instance's key (altered, another Run's, or sealed under another key); the agent starts a new one",
    );
    expect(JSON.stringify(fake!.loopRequests().at(-1)!.body)).not.toContain("avocado");
  }, 120_000);

  it("a retry whose session is not kept starts a new conversation, and says so", async () => {
    const { outcome, out } = await claudeAttempt([{ text: "Fresh start." }], "realnosession/agent/2", {
      prompt: "Go on.",
      resumeSession: "00000000-0000-4000-8000-000000000000",
    });
    expect(outcome.tag).toBe("Succeeded");
    expect(out.map((e) => e.text)).toContain("the agent's session 00000000-0000-4000-8000-000000000000 is not kept; the agent starts a new one");
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
    expect(attemptPidsWithArgument(CLAUDE, "claudehang/agent/1")).toEqual([]);
  }, 120_000);

  it("holds no model key: a steered agent that commits its whole environment and files, encoded, leaks only the placeholder", async () => {
    const { outcome, out } = await claudeAttempt(
      [{ text: "Saving notes.", tools: [{ name: "Bash", input: { command: COMMIT_EVERYTHING, description: "Save notes" } }] }, { text: "Saved." }],
      "realleak/agent/1",
    );
    expect(outcome.tag, transcript(out)).toBe("Succeeded");
    const leak = decodeLeak("atelier/start-dev/realleak");
    // the agent saw its environment (the gateway's local URL, the placeholder) and still talked to its model …
    expect(leak).toContain(`ANTHROPIC_API_KEY=${PLACEHOLDER_KEY}`);
    expect(leak).toMatch(/ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+/);
    expect(fake!.loopRequests()).toHaveLength(2);
    for (const r of fake!.requests) expect(r.headers["x-api-key"]).toBe(KEY);
    // … and the key was nowhere it could read
    expect(leak).not.toContain(KEY);
    expect(leak).not.toContain(KEY.slice(8, 30));
  }, 120_000);
});

describe("the real codex CLI in its sandbox", () => {
  let openai: FakeOpenAi | null = null;
  afterEach(async () => {
    await openai?.close();
    openai = null;
  });

  it("commits through its tool, its model API brokered: the key added by the gateway, the usage read from response.completed", async () => {
    openai = await startFakeOpenAi([{ text: "I will add hello.txt.", exec: [COMMIT_HELLO] }, { text: "Added hello.txt and committed it." }]);
    const spec: NamedAgentSpec = {
      name: "codex",
      command: [CODEX, "exec"],
      model_api: { url: openai.baseUrl, secret: "OPENAI_API_KEY", protocol: "openai" },
      token_prices: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: null },
      read_only_paths: [CODEX_PACKAGES],
      egress: ["registry.npmjs.org"], // as for claude: with the proxy set

      max_attempt_minutes: 3,
      adapter: agent({ kind: "codex", command: [CODEX, "exec"], model: "gpt-5.5", pricePerMillionInputUsd: 1.25, pricePerMillionOutputUsd: 10 }),
    };
    const { outcome, out } = await attempt(spec, "realcodex/agent/1", {});
    expect(outcome.tag, transcript(out)).toBe("Succeeded");
    expect(sh(fx.remote, "show", `${remoteSha(fx.remote, "atelier/start-dev/realcodex")}:hello.txt`)).toBe("hello");
    expect(openai.requests.length).toBe(2);
    for (const r of openai.requests) expect(r.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    const u = DEFAULT_OPENAI_USAGE;
    expect(outcome.usage).toMatchObject({ costExact: true, tokensIn: 2 * u.input_tokens, tokensOut: 2 * u.output_tokens, model: "gpt-5.5" });
    expect(outcome.usage.costUsd).toBeCloseTo((2 * (u.input_tokens - u.cached_tokens) * 1.25 + 2 * u.cached_tokens * 0.125 + 2 * u.output_tokens * 10) / 1e6, 9);
    expect(outcome.usage.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  }, 120_000);
});
