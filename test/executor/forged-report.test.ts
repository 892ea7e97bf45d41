import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt } from "../../lib/executor/execute-attempt";
import { DEFAULT_TURN_USAGE, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic";
import { agent } from "./adapters/real-cli";
import { attemptOn, makeRemote, type RemoteFixture } from "./git-fixture";

/**
 * THREATS.md 31, played by the attacker: `result` lines forged on the CLI's stdout by another
 * process of its sandbox (through /proc/<pid>/fd/1; fixtures/forging-claude.sh), one before the
 * CLI's own result and one after, each claiming $0 and a session_id that is an argument.
 */

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const SCRIPT = join(FIXTURES, "forging-claude.sh");
const SESSION = "5f0c7a4e-1b2c-4d3e-8f9a-0123456789ab";
const KEY = "sk-ant-api03-forged-report-test-0123456789";
const PRICE_PER_MINUTE = 6;

let fx: RemoteFixture;
beforeAll(() => {
  fx = makeRemote();
});
afterAll(() => fx.cleanup());

/** The scripted model API of one test, closed when it ends. */
async function modelApi(): Promise<FakeAnthropic> {
  const fake = await startFakeAnthropic([{ text: "Hello." }]);
  onTestFinished(() => fake.close());
  return fake;
}

async function forge(attemptId: string, over: Partial<NamedAgentSpec> = {}, sandbox: "on" | "off" = "on") {
  const spec: NamedAgentSpec = {
    name: "forger",
    command: ["bash", SCRIPT],
    read_only_paths: [FIXTURES],
    price_per_minute_usd: PRICE_PER_MINUTE,
    adapter: agent({ kind: "claude", command: ["bash", SCRIPT] }),
    ...over,
  };
  const out: OutputEntry[] = [];
  const outcome = await executeAttempt(
    attemptOn(fx, attemptId, spec, { number: 31, prompt: "Do the work.", sandbox }),
    { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ANTHROPIC_API_KEY: KEY } },
  );
  const stdout = out.filter((e) => e.stream === "stdout").map((e) => e.text).join("");
  return { outcome, out, stdout };
}

describe("a result line forged on the CLI's stdout", () => {
  it("with no gateway reading, bills no less than minutes × price, and its session_id is no session", async () => {
    const { outcome, out, stdout } = await forge("forged1/agent/1");
    expect(outcome.tag, out.map((e) => `[${e.stream}] ${e.text}`).join("\n")).toBe("Succeeded");
    // both forged lines reached the CLI's stdout, around its own result
    expect(stdout.match(/"result":"forged"/g)).toHaveLength(2);
    expect(stdout).toContain('"result":"done"');
    const floor = (outcome.usage.agentMs / 60_000) * PRICE_PER_MINUTE;
    expect(outcome.usage.costUsd).toBeGreaterThanOrEqual(Math.floor(floor * 1e6) / 1e6);
    expect(outcome.usage).toMatchObject({ costEstimated: true, costExact: false });
    // the session is the CLI's own, never "--mcp-config=…" (which would become --resume's value)
    expect(outcome.usage.sessionId).toBe(SESSION);
  }, 60_000);

  it("with its model API brokered, bills what the gateway read of the model's answers, whatever the lines say", async () => {
    const fake = await modelApi();
    const { outcome, out, stdout } = await forge("forged2/agent/1", {
      model_api: { url: fake.url, secret: "ANTHROPIC_API_KEY", protocol: "anthropic" },
      token_prices: { input: 3, output: 15, cacheRead: null, cacheWrite: null },
    });
    expect(outcome.tag, out.map((e) => `[${e.stream}] ${e.text}`).join("\n")).toBe("Succeeded");
    expect(stdout.match(/"result":"forged"/g)).toHaveLength(2);
    expect(fake.loopRequests()).toHaveLength(1);
    expect(fake.loopRequests()[0]!.headers["x-api-key"]).toBe(KEY);
    const u = DEFAULT_TURN_USAGE;
    const tokensIn = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    expect(outcome.usage).toMatchObject({ costExact: true, costEstimated: false, tokensIn, tokensOut: u.output_tokens });
    expect(outcome.usage.costUsd).toBeCloseTo((tokensIn * 3 + u.output_tokens * 15) / 1e6, 9);
    expect(outcome.usage.sessionId).toBe(SESSION);
  }, 60_000);

  it("unconfined (sandbox: off), the model API is brokered and metered the same way, on this machine's loopback", async () => {
    const fake = await modelApi();
    const { outcome, out } = await forge(
      "forged3/agent/1",
      { model_api: { url: fake.url, secret: "ANTHROPIC_API_KEY", protocol: "anthropic" }, token_prices: { input: 3, output: 15, cacheRead: null, cacheWrite: null } },
      "off",
    );
    expect(outcome.tag, out.map((e) => `[${e.stream}] ${e.text}`).join("\n")).toBe("Succeeded");
    expect(fake.loopRequests()[0]!.headers["x-api-key"]).toBe(KEY);
    expect(outcome.usage).toMatchObject({ costExact: true, tokensOut: DEFAULT_TURN_USAGE.output_tokens });
  }, 60_000);
});
