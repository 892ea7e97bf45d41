import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt } from "../../lib/executor/execute-attempt";
import { attemptOn, makeRemote, remoteSha, sh, type RemoteFixture } from "./git-fixture";

/**
 * Another tool's credential, brokered like the model key: the roster's `apis:` entry gives the
 * tool a local base URL in the variable it names, and the gateway adds `authorization: Bearer
 * <secret>` for that upstream. The agent here is a shell command that calls the API and commits
 * the answer and everything it can see of its environment.
 */

const TOOL_TOKEN = "ghp_BrokeredToolToken0123456789abcdefghijk";
let fx: RemoteFixture;
let api: Server;
let apiUrl: string;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  fx = makeRemote();
  api = createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    res.writeHead(200, { "content-type": "application/json" }).end('{"login":"octocat"}');
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as { port: number }).port}/api/v3`;
});
afterAll(() => {
  api.close();
  fx.cleanup();
});

const CALL_AND_COMMIT = [
  'curl -sS -H "authorization: Bearer made-up-by-the-agent" "$TOOL_API_URL/user" > answer.json',
  "{ env; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done; } > seen.txt 2>/dev/null",
  "git add answer.json seen.txt && git commit -q -m 'Call the tool'",
].join(" && ");

async function run(attemptId: string, sourceEnv: NodeJS.ProcessEnv) {
  const spec: NamedAgentSpec = {
    name: "tooled",
    command: ["bash", "-c", CALL_AND_COMMIT],
    apis: [{ url: apiUrl, secret: "TOOL_TOKEN", header: "authorization", scheme: "Bearer", env: "TOOL_API_URL" }],
    price_per_minute_usd: 1,
  };
  const out: OutputEntry[] = [];
  const outcome = await executeAttempt(
    attemptOn(fx, attemptId, spec, { number: 4, prompt: "Call the tool." }),
    { onOutput: (e) => out.push(e), sourceEnv: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...sourceEnv } },
  );
  return { outcome, out };
}

describe("a tool's API brokered by the gateway", () => {
  it("reaches its upstream with the instance's token, which is nowhere in the sandbox", async () => {
    const { outcome, out } = await run("tooled/agent/1", { TOOL_TOKEN });
    expect(outcome.tag, out.map((e) => `[${e.stream}] ${e.text}`).join("\n")).toBe("Succeeded");
    const head = remoteSha(fx.remote, "atelier/start-dev/tooled")!;
    expect(sh(fx.remote, "show", `${head}:answer.json`)).toBe('{"login":"octocat"}');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ url: "/api/v3/user", headers: { authorization: `Bearer ${TOOL_TOKEN}` } });
    const env = sh(fx.remote, "show", `${head}:seen.txt`);
    expect(env).toMatch(/^TOOL_API_URL=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(env).not.toContain(TOOL_TOKEN);
    // the gateway's reading is of model APIs only: this agent is billed by the minute
    expect(outcome.usage).toMatchObject({ costExact: false, costEstimated: true });
  }, 60_000);

  it("an unset secret fails the Attempt before anything runs, naming the variable", async () => {
    const { outcome } = await run("tooledmissing/agent/1", {});
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ category: "configuration", message: expect.stringContaining("needs TOOL_TOKEN") });
  });
});
