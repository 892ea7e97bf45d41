import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { isProcessAlive, isProcessGroupAlive } from "../../lib/executor/process-group";
import { runAgent, type AgentControl, type RunAgentInput } from "../../lib/executor/run-agent";
import { AtelierError } from "../../lib/errors";
import { makeRepo, sh } from "./git-fixture";

const demo: NamedAgentSpec = { name: "demo", command: ["atelier-demo-agent"] };
let repo: { dir: string; cleanup(): void };

beforeAll(() => {
  repo = makeRepo();
});
afterAll(() => repo.cleanup());

function run(prompt: string, over: Partial<RunAgentInput> = {}, sourceEnv: Record<string, string> = {}) {
  const out: (OutputEntry & { at: number })[] = [];
  let control: AgentControl | null = null;
  const promise = runAgent({
    agent: demo,
    cwd: repo.dir,
    context: {
      runId: "run1",
      attemptId: "run1/agent/1",
      repo: "acme/widgets",
      number: 7,
      branch: "atelier/start-dev/7",
      resultFile: join(repo.dir, "..", `${Math.random().toString(36).slice(2)}.result.json`),
      prompt,
    },
    onOutput: (e) => out.push({ ...e, at: Date.now() }),
    onStarted: (c) => (control = c),
    sourceEnv: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATELIER_DEMO_DELAY_MS: "10", ...sourceEnv },
    ...over,
  });
  const text = (stream: OutputEntry["stream"]) =>
    out
      .filter((e) => e.stream === stream)
      .map((e) => e.text)
      .join("");
  const waitFor = async (re: RegExp) => {
    for (let i = 0; i < 200; i++) {
      const m = text("stdout").match(re);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`never saw ${re}`);
  };
  return { promise, out, text, waitFor, control: () => control };
}

describe("runAgent with the demo agent", () => {
  it("streams the agent's lines to the sink in order, as they come", async () => {
    const r = run("Fix the frobnicator\nmore text", {}, { ATELIER_DEMO_DELAY_MS: "100" });
    const result = await r.promise;
    expect(result.tag).toBe("Exited");
    const lines = r.text("stdout").trimEnd().split("\n");
    expect(lines).toEqual([
      "demo agent: received a prompt of 29 characters",
      "demo agent: first line: Fix the frobnicator",
      "demo agent: writing atelier-demo/7.md",
      "demo agent: committed",
      "demo agent: done",
    ]);
    const stdout = r.out.filter((e) => e.stream === "stdout");
    expect(stdout.length).toBeGreaterThanOrEqual(4);
    expect(stdout.at(-1)!.at - stdout[0]!.at).toBeGreaterThanOrEqual(250);
    expect(sh(repo.dir, "log", "-1", "--format=%s|%an|%ae")).toBe("Atelier demo: Fix the frobnicator|Atelier Agent|agent@atelier.invalid");
    expect(readFileSync(join(repo.dir, "atelier-demo/7.md"), "utf8")).toBe("# Atelier demo\n\nFix the frobnicator\n");
  });

  it("gives the agent a clean environment: no worker variables, its named secrets, its context", async () => {
    process.env.ATELIER_TEST_WORKER_ONLY = "do-not-pass";
    try {
      const r = run(
        "[demo:print-token] env check",
        { agent: { ...demo, secrets: ["DEMO_API_KEY"] } },
        { ATELIER_DEMO_LEAK_VAR: "ATELIER_TEST_WORKER_ONLY", DEMO_API_KEY: "k-123456" },
      );
      const result = await r.promise;
      expect(result.tag).toBe("Exited");
      // The worker-only variable is not in the agent's environment, so it prints nothing.
      expect(r.text("stdout")).toContain("the secret is  (printed on purpose)");
    } finally {
      delete process.env.ATELIER_TEST_WORKER_ONLY;
    }
  });

  it("redacts a secret the agent prints in two pieces", async () => {
    const secret = "sk-live-0123456789abcdef";
    const r = run("[demo:print-token] leak it", { agent: { ...demo, secrets: ["DEMO_API_KEY"] } }, {
      ATELIER_DEMO_LEAK_VAR: "DEMO_API_KEY",
      DEMO_API_KEY: secret,
    });
    expect((await r.promise).tag).toBe("Exited");
    const stdout = r.text("stdout");
    expect(stdout).toContain("the secret is *** (printed on purpose)");
    expect(stdout).not.toContain(secret.slice(0, 8));
    expect(stdout).not.toContain(secret.slice(-8));
    // The partial line was shown before its end arrived: the secret really was split.
    expect(r.out.some((e) => e.stream === "stdout" && e.text === "demo agent: the secret is ")).toBe(true);
  });

  it("fails with AgentFailure(agent_exit) on a non-zero exit, quoting the last stderr line", async () => {
    const r = run("[demo:fail] please");
    const result = await r.promise;
    expect(result.tag).toBe("Failed");
    if (result.tag !== "Failed") return;
    expect(result.failure).toMatchObject({ kind: "AgentFailure", category: "agent_exit", retryable: false });
    expect(result.failure.message).toMatch(/exited with code 3: demo agent: failing as asked/);
    expect(r.text("stderr")).toContain("failing as asked");
  });

  it("fails with AgentFailure(configuration) when the command does not exist", async () => {
    const r = run("x", { agent: { name: "ghost", command: ["atelier-no-such-command-xyz", "--flag"] } });
    const result = await r.promise;
    expect(result.tag === "Failed" && result.failure).toMatchObject({ kind: "AgentFailure", category: "configuration" });
    expect(result.tag === "Failed" && result.failure.message).toMatch(/command not found: atelier-no-such-command-xyz/);
  });

  it("fails with AgentFailure(configuration) when a named secret is not set", async () => {
    const r = run("x", { agent: { ...demo, secrets: ["DEMO_MISSING_SECRET"] } });
    const result = await r.promise;
    expect(result.tag === "Failed" && result.failure).toMatchObject({ kind: "AgentFailure", category: "configuration" });
    expect(result.tag === "Failed" && result.failure.message).toContain("DEMO_MISSING_SECRET");
  });

  it("stops an agent that outlives max_attempt_minutes: RunawayFailure, and its whole group is gone", async () => {
    const started = Date.now();
    const r = run("[demo:spawn-child] [demo:sleep 30]", { agent: { ...demo, max_attempt_minutes: 0.02 } });
    const childPid = Number((await r.waitFor(/child pid (\d+)/))[1]);
    const pid = r.control()!.pid;
    const result = await r.promise;
    expect(result.tag === "Failed" && result.failure).toMatchObject({ kind: "RunawayFailure", category: "timeout", retryable: false });
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(isProcessGroupAlive(pid)).toBe(false);
    expect(isProcessAlive(childPid)).toBe(false);
    expect(r.text("system")).toMatch(/exceeded max_attempt_minutes/);
  });

  it("cancel kills the agent and the child it started", async () => {
    const ac = new AbortController();
    const r = run("[demo:spawn-child] [demo:sleep 30]", { signal: ac.signal });
    const childPid = Number((await r.waitFor(/child pid (\d+)/))[1]);
    expect(isProcessAlive(childPid)).toBe(true);
    ac.abort();
    const result = await r.promise;
    expect(result.tag).toBe("Canceled");
    expect(isProcessAlive(childPid)).toBe(false);
    expect(isProcessGroupAlive(r.control()!.pid)).toBe(false);
  });

  it("escalates to SIGKILL when the agent ignores SIGTERM", async () => {
    const ac = new AbortController();
    const r = run("[demo:ignore-sigterm] [demo:sleep 30]", { signal: ac.signal, killGraceMs: 300 });
    await r.waitFor(/writing/);
    const t0 = Date.now();
    ac.abort();
    expect((await r.promise).tag).toBe("Canceled");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(isProcessGroupAlive(r.control()!.pid)).toBe(false);
  });

  it("a lost lease stops the agent as an InfraFailure(lease_lost)", async () => {
    const lease = new AbortController();
    const r = run("[demo:sleep 30]", { leaseLost: lease.signal });
    await r.waitFor(/writing/);
    lease.abort();
    const result = await r.promise;
    expect(result.tag === "Failed" && result.failure).toMatchObject({ kind: "InfraFailure", category: "lease_lost", retryable: true });
  });

  it("passes an intervention to the agent's stdin when the roster allows it", async () => {
    const r = run("Intervene me [demo:sleep 0.5]", { agent: { ...demo, intervene: true } });
    await r.waitFor(/writing/);
    r.control()!.intervene("please also update the docs");
    expect((await r.promise).tag).toBe("Exited");
    expect(r.text("stdout")).toContain("heard: please also update the docs");
    expect(r.text("system")).toContain("intervention: please also update the docs");
  });

  it("refuses an intervention when the roster does not allow it", async () => {
    const r = run("No interventions [demo:sleep 0.3]");
    await r.waitFor(/writing/);
    let caught: unknown;
    try {
      r.control()!.intervene("hello");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AtelierError);
    expect(caught).toMatchObject({ token: "intervene_not_allowed", status: 400 });
    expect((await r.promise).tag).toBe("Exited");
  });

  it("does not leave the result file in the worktree", async () => {
    const r = run("Result elsewhere");
    expect((await r.promise).tag).toBe("Exited");
    expect(existsSync(join(repo.dir, ".result.json"))).toBe(false);
    expect(sh(repo.dir, "status", "--porcelain")).toBe("");
  });
});
