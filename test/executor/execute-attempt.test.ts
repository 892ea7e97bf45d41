import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt, type AttemptInput, type AttemptPhase } from "../../lib/executor/execute-attempt";
import { isProcessAlive } from "../../lib/executor/process-group";
import { cacheDir } from "../../lib/executor/workspace-paths";
import { demoChildAlive } from "../support/processes";
import { makeRemote, remoteSha, sh, type RemoteFixture } from "./git-fixture";

const TOKEN = "ghs_0123456789abcdefghijABCDEFGHIJ012345";
// a price low enough that the demo agent's own report is above the minutes estimate
const demo: NamedAgentSpec = { name: "demo", command: ["atelier-demo-agent"], price_per_minute_usd: 0.0001 };
const ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATELIER_DEMO_DELAY_MS: "10" };

let fx: RemoteFixture;
beforeEach(() => {
  fx = makeRemote();
});
afterEach(() => fx.cleanup());

function input(over: Partial<AttemptInput> = {}): AttemptInput {
  return {
    runId: "r1",
    attemptId: "r1/agent/1",
    loop: "start-dev",
    repo: "acme/widgets",
    number: 12,
    prompt: "Implement issue #12: add a widget\n\nDetails here.",
    agent: demo,
    cloneUrl: fx.url,
    token: TOKEN,
    defaultBranch: "main",
    branch: "atelier/start-dev/12",
    workspaceRoot: fx.root,
    repositoryId: "1001",
    ...over,
  };
}

function recorder() {
  const out: OutputEntry[] = [];
  const phases: AttemptPhase[] = [];
  return {
    out,
    phases,
    deps: { onOutput: (e: OutputEntry) => out.push(e), onPhase: (p: AttemptPhase) => phases.push(p), sourceEnv: ENV },
    text: (stream: OutputEntry["stream"]) =>
      out
        .filter((e) => e.stream === stream)
        .map((e) => e.text)
        .join(""),
  };
}

function expectNoWorktreeLeft() {
  expect(readdirSync(join(fx.root, "attempts"))).toEqual([]);
  const list = sh(cacheDir(fx.root, "1001"), "worktree", "list", "--porcelain");
  expect(list.split("\n").filter((l) => l.startsWith("worktree "))).toHaveLength(1); // the bare clone itself
}

describe("executeAttempt", () => {
  it("runs the demo agent, streams its output, pushes its commit to the Run's branch and removes the worktree", async () => {
    const rec = recorder();
    const outcome = await executeAttempt(input(), rec.deps);
    expect(outcome.tag).toBe("Succeeded");
    if (outcome.tag !== "Succeeded") return;

    const head = remoteSha(fx.remote, "atelier/start-dev/12");
    expect(head).not.toBeNull();
    expect(outcome.harvest).toMatchObject({ branch: "atelier/start-dev/12", headSha: head, pushed: true, committedLeftovers: false });
    expect(outcome.harvest.commits).toEqual([{ sha: head, subject: "Atelier demo: Implement issue #12: add a widget" }]);
    expect(outcome.harvest.baseSha).toBe(remoteSha(fx.remote, "main"));
    expect(sh(fx.remote, "show", `${head}:atelier-demo/12.md`)).toBe("# Atelier demo\n\nImplement issue #12: add a widget");

    expect(outcome.summary).toBe("Wrote atelier-demo/12.md: Implement issue #12: add a widget");
    expect(outcome.pullRequest).toEqual({ title: "Atelier demo: Implement issue #12: add a widget", body: "The demo agent wrote `atelier-demo/12.md`." });
    expect(outcome.usage).toMatchObject({ tokensIn: 48, tokensOut: 50, costUsd: 0.000294, costEstimated: false });
    expect(outcome.usage.durationMs).toBeGreaterThan(0);

    expect(rec.phases).toEqual(["preparing", "running", "harvesting", "cleaning"]);
    expect(rec.text("stdout").trimEnd().split("\n")).toEqual([
      "demo agent: received a prompt of 48 characters",
      "demo agent: first line: Implement issue #12: add a widget",
      "demo agent: writing atelier-demo/12.md",
      "demo agent: committed",
      "demo agent: done",
    ]);
    expect(rec.text("system")).toMatch(/starting from main/);
    expect(rec.text("system")).toMatch(/pushed 1 commit\(s\) to atelier\/start-dev\/12/);
    expectNoWorktreeLeft();
    // The token never lands in the clone's configuration.
    expect(readFileSync(join(cacheDir(fx.root, "1001"), "config"), "utf8")).not.toContain(TOKEN);
  });

  it("a retry starts from the pushed branch and adds to it", async () => {
    const first = await executeAttempt(input(), recorder().deps);
    expect(first.tag).toBe("Succeeded");
    const firstHead = remoteSha(fx.remote, "atelier/start-dev/12");

    const rec = recorder();
    const second = await executeAttempt(
      input({ attemptId: "r1/agent/2", prompt: "Implement issue #12 again: now with tests" }),
      rec.deps,
    );
    expect(second.tag).toBe("Succeeded");
    if (second.tag !== "Succeeded") return;
    expect(rec.text("system")).toContain(`continuing from atelier/start-dev/12 at ${firstHead!.slice(0, 12)}`);
    expect(second.harvest.baseSha).toBe(firstHead);
    expect(second.harvest.commits).toHaveLength(1);
    const head = remoteSha(fx.remote, "atelier/start-dev/12");
    expect(sh(fx.remote, "rev-parse", `${head}^`)).toBe(firstHead);
    expectNoWorktreeLeft();
  });

  it("the same prompt again makes no commit: Succeeded, nothing pushed", async () => {
    await executeAttempt(input(), recorder().deps);
    const before = remoteSha(fx.remote, "atelier/start-dev/12");
    const again = await executeAttempt(input({ attemptId: "r1/agent/2" }), recorder().deps);
    expect(again.tag === "Succeeded" && again.harvest).toMatchObject({ pushed: false, commits: [], headSha: before });
    expect(remoteSha(fx.remote, "atelier/start-dev/12")).toBe(before);
  });

  it("two Attempts on one repository at once share the clone and both push", async () => {
    const [a, b] = await Promise.all([
      executeAttempt(input(), recorder().deps),
      executeAttempt(
        input({ runId: "r2", attemptId: "r2/agent/1", number: 13, branch: "atelier/start-dev/13", prompt: "Issue 13" }),
        recorder().deps,
      ),
    ]);
    expect([a.tag, b.tag]).toEqual(["Succeeded", "Succeeded"]);
    expect(remoteSha(fx.remote, "atelier/start-dev/12")).not.toBeNull();
    expect(remoteSha(fx.remote, "atelier/start-dev/13")).not.toBeNull();
    expectNoWorktreeLeft();
  });

  it("a schedule Tick pushes to its tick branch", async () => {
    const outcome = await executeAttempt(
      input({ number: null, loop: "nightly", branch: "atelier/nightly/tick-20250304T060000Z", prompt: "Triage" }),
      recorder().deps,
    );
    expect(outcome.tag).toBe("Succeeded");
    const head = remoteSha(fx.remote, "atelier/nightly/tick-20250304T060000Z");
    expect(sh(fx.remote, "show", `${head}:atelier-demo/tick-20250304T060000Z.md`)).toContain("Triage");
  });

  it("ignores a malformed result file with a system line; the Attempt still succeeds with an estimated cost", async () => {
    const rec = recorder();
    const outcome = await executeAttempt(input({ prompt: "Bad result please [demo:bad-result]", agent: { ...demo, price_per_minute_usd: 0.6 } }), rec.deps);
    expect(outcome.tag).toBe("Succeeded");
    if (outcome.tag !== "Succeeded") return;
    expect(rec.text("system")).toMatch(/result file ignored: it is not valid JSON/);
    expect(outcome.summary).toBe("Pushed 1 commit to atelier/start-dev/12.");
    expect(outcome.pullRequest).toBeNull();
    expect(outcome.usage).toMatchObject({ tokensIn: null, tokensOut: null, costEstimated: true });
    expect(outcome.usage.costUsd).toBeCloseTo((outcome.usage.agentMs / 60_000) * 0.6, 6);
    expect(remoteSha(fx.remote, "atelier/start-dev/12")).not.toBeNull();
  });

  it("commits what the agent left uncommitted", async () => {
    const outcome = await executeAttempt(
      input({ agent: { name: "sh", command: ["sh", "-c", "echo draft > notes.txt && cat > /dev/null"] } }),
      recorder().deps,
    );
    expect(outcome.tag === "Succeeded" && outcome.harvest).toMatchObject({
      pushed: true,
      committedLeftovers: true,
      commits: [{ subject: "Atelier: uncommitted changes from r1/agent/1" }],
    });
    expect(sh(fx.remote, "show", "atelier/start-dev/12:notes.txt")).toBe("draft");
  });

  it("a non-zero exit is an AgentFailure; nothing is pushed and the worktree is removed", async () => {
    const outcome = await executeAttempt(input({ prompt: "[demo:fail]" }), recorder().deps);
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "AgentFailure", category: "agent_exit" });
    expect(remoteSha(fx.remote, "atelier/start-dev/12")).toBeNull();
    expectNoWorktreeLeft();
  });

  it("an agent past its limit is a RunawayFailure", async () => {
    const outcome = await executeAttempt(
      input({ prompt: "[demo:sleep 30]", agent: { ...demo, max_attempt_minutes: 0.02 } }),
      recorder().deps,
    );
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "RunawayFailure", category: "timeout" });
    expectNoWorktreeLeft();
  });

  it("cancel kills the agent and its child; outcome Canceled, worktree removed", async () => {
    const ac = new AbortController();
    const rec = recorder();
    let agentPid = 0;
    const promise = executeAttempt(input({ prompt: "[demo:spawn-child] [demo:sleep 30]", signal: ac.signal }), {
      ...rec.deps,
      onAgentStarted: (c) => (agentPid = c.pid),
    });
    for (let i = 0; i < 400 && !rec.text("stdout").includes("child pid"); i++) await new Promise((r) => setTimeout(r, 25));
    expect(demoChildAlive("r1/agent/1")).toBe(true);
    ac.abort();
    const outcome = await promise;
    expect(outcome.tag).toBe("Canceled");
    expect(demoChildAlive("r1/agent/1")).toBe(false);
    expect(isProcessAlive(agentPid)).toBe(false);
    expect(remoteSha(fx.remote, "atelier/start-dev/12")).toBeNull();
    expectNoWorktreeLeft();
  });

  it("an agent printing the installation token shows it redacted", async () => {
    const rec = recorder();
    const outcome = await executeAttempt(
      input({ prompt: "[demo:print-token]", agent: { ...demo, secrets: ["LEAKY"] } }),
      { ...rec.deps, sourceEnv: { ...ENV, LEAKY: TOKEN, ATELIER_DEMO_LEAK_VAR: "LEAKY" } },
    );
    expect(outcome.tag).toBe("Succeeded");
    expect(JSON.stringify(rec.out)).not.toContain(TOKEN.slice(4, 20));
    expect(rec.text("stdout")).toContain("the secret is *** (printed on purpose)");
  });

  it("a remote that is not found fails for an operator to act (not retryable, so not retried) and leaves nothing behind", async () => {
    const outcome = await executeAttempt(input({ cloneUrl: `${fx.url}-missing` }), recorder().deps);
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "AgentFailure", category: "authentication", retryable: false });
    expect(existsSync(join(fx.root, "worktrees"))).toBe(false);
  });

  it("a clone URL carrying credentials is refused", async () => {
    const outcome = await executeAttempt(input({ cloneUrl: "https://x-access-token:abc@example.invalid/a/b.git" }), recorder().deps);
    expect(outcome.tag === "Failed" && outcome.failure).toMatchObject({ kind: "DefectFailure" });
  });

  it("an Attempt canceled before it starts does nothing", async () => {
    const ac = new AbortController();
    ac.abort();
    const rec = recorder();
    const outcome = await executeAttempt(input({ signal: ac.signal }), rec.deps);
    expect(outcome.tag).toBe("Canceled");
    expect(rec.phases).toEqual([]);
  });
});
