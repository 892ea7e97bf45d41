import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt, type AttemptInput } from "../../lib/executor/execute-attempt";
import { cacheDir } from "../../lib/executor/workspace-paths";
import { makeRemote, remoteSha, type RemoteFixture } from "./git-fixture";
import { startGitHttpServer, type GitHttpServer } from "./git-http-server";

const TOKEN = "ghs_httpAuthToken0123456789abcdefghijklm";
let fx: RemoteFixture;
let server: GitHttpServer;

beforeEach(async () => {
  fx = makeRemote();
  server = await startGitHttpServer(fx.dir, TOKEN);
});
afterEach(async () => {
  await server.close();
  fx.cleanup();
});

function input(over: Partial<AttemptInput> = {}): AttemptInput {
  return {
    runId: "r9",
    attemptId: "r9/agent/1",
    loop: "start-dev",
    repo: "acme/widgets",
    number: 9,
    prompt: "Over HTTP",
    agent: { name: "demo", command: ["atelier-demo-agent"] },
    cloneUrl: `${server.url}/remote.git`,
    token: TOKEN,
    defaultBranch: "main",
    branch: "atelier/start-dev/9",
    workspaceRoot: fx.root,
    repositoryId: "1001",
    ...over,
  };
}

const deps = (out: OutputEntry[] = []) => ({
  onOutput: (e: OutputEntry) => out.push(e),
  sourceEnv: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATELIER_DEMO_DELAY_MS: "0" },
});

describe("git over HTTP with the installation token", () => {
  it("fetches and pushes with the token sent as a Basic header, never stored", async () => {
    const out: OutputEntry[] = [];
    const outcome = await executeAttempt(input(), deps(out));
    expect(outcome.tag).toBe("Succeeded");
    expect(outcome.tag === "Succeeded" && outcome.harvest.pushed).toBe(true);
    expect(remoteSha(fx.remote, "atelier/start-dev/9")).not.toBeNull();
    expect(server.requests.some((r) => r.path.includes("git-receive-pack"))).toBe(true);
    const config = readFileSync(join(cacheDir(fx.root, "1001"), "config"), "utf8");
    expect(config).not.toContain(TOKEN);
    expect(config).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString("base64"));
    expect(config).toContain(`url = ${server.url}/remote.git`);
    expect(JSON.stringify(out)).not.toContain(TOKEN);
  });

  it("a token the remote refuses fails the fetch as authentication, not retryable and so not retried", async () => {
    const outcome = await executeAttempt(input({ token: "ghs_wrongToken0123456789abcdefghijklmnop" }), deps());
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "AgentFailure", category: "authentication", retryable: false });
    expect(outcome.tag === "Failed" && outcome.failure.message).not.toContain("wrongToken");
  });

  it("a push refused with 403 is AgentFailure(authentication)", async () => {
    server.pushMode = "forbidden";
    const outcome = await executeAttempt(input(), deps());
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "AgentFailure", category: "authentication", retryable: false });
    expect(remoteSha(fx.remote, "atelier/start-dev/9")).toBeNull();
  });

  it("a push failing with 503 is InfraFailure(transport), retryable", async () => {
    server.pushMode = "unavailable";
    const outcome = await executeAttempt(input(), deps());
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "InfraFailure", category: "transport", retryable: true });
  });
});
