import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NamedAgentSpec, OutputEntry } from "../../lib/executor/agent-spec";
import { executeAttempt, type AttemptInput, type AttemptOutcome } from "../../lib/executor/execute-attempt";
import type { VerifySpec } from "../../lib/executor/verify-spec";
import { metricsText } from "../../lib/metrics/metrics";
import { makeRemote, remoteSha, sh, type RemoteFixture } from "./git-fixture";

/**
 * verify, run by the executor on the harvested commit in a fresh sandbox (the host's bubblewrap,
 * as in production): its result, the draft/retry choice, and an agent that tries to change
 * verify's answer from outside the commit it made.
 */

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const TOKEN = "ghs_0123456789abcdefghijVERIFYTOKEN012345";
const demo: NamedAgentSpec = { name: "demo", command: ["atelier-demo-agent"] };
const ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATELIER_DEMO_DELAY_MS: "5" };

/** The repository's test: sources an override wherever one is found (what an attacker would aim at), fails on BROKEN. */
const CHECK = `#!/bin/sh
for f in ./override.sh "$HOME/override.sh" /tmp/override.sh; do [ -f "$f" ] && . "$f"; done
echo "running the tests"
if grep -rq BROKEN atelier-demo 2>/dev/null; then grep -r BROKEN atelier-demo; echo "FAILED: a file says BROKEN"; exit 1; fi
echo "all tests passed"
`;

let fx: RemoteFixture;
beforeEach(() => {
  fx = makeRemote();
  writeFileSync(join(fx.work, "check.sh"), CHECK);
  writeFileSync(join(fx.work, ".gitignore"), "override.sh\n");
  sh(fx.work, "add", "check.sh", ".gitignore");
  sh(fx.work, "commit", "--quiet", "-m", "Add the tests");
  sh(fx.work, "push", "--quiet", fx.remote, "main");
});
afterEach(() => fx.cleanup());

const verify = (over: Partial<VerifySpec> = {}): VerifySpec => ({ command: "sh check.sh", onFailure: "draft", maxRounds: 1, ...over });

function input(over: Partial<AttemptInput> = {}): AttemptInput {
  return {
    runId: "rv",
    attemptId: "rv/agent/1",
    loop: "start-dev",
    repo: "acme/widgets",
    number: 5,
    prompt: "Add a widget\n\n[demo:break-test]",
    agent: demo,
    cloneUrl: fx.url,
    token: TOKEN,
    defaultBranch: "main",
    branch: "atelier/start-dev/5",
    workspaceRoot: fx.root,
    repositoryId: "1001",
    verify: verify(),
    ...over,
  };
}

async function run(over: Partial<AttemptInput> = {}): Promise<{ outcome: AttemptOutcome; text: (s: OutputEntry["stream"]) => string }> {
  const out: OutputEntry[] = [];
  const outcome = await executeAttempt(input(over), { onOutput: (e) => out.push(e), sourceEnv: ENV });
  return {
    outcome,
    text: (stream) =>
      out
        .filter((e) => e.stream === stream)
        .map((e) => e.text)
        .join(""),
  };
}

function succeeded(outcome: AttemptOutcome): Extract<AttemptOutcome, { tag: "Succeeded" }> {
  if (outcome.tag !== "Succeeded") throw new Error(`expected Succeeded, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe("verify", () => {
  it("passes on good work: the result is on the outcome and the commit is pushed", async () => {
    const { outcome, text } = await run({ prompt: "Add a widget" });
    const o = succeeded(outcome);
    expect(o.verify).toMatchObject({ passed: true, exitCode: 0, timedOut: false, command: "sh check.sh", rounds: 1 });
    expect(o.verify!.tail).toMatch(/all tests passed$/);
    expect(o.harvest.pushed).toBe(true);
    expect(text("system")).toMatch(/verify: running `sh check.sh` on the harvested commit, in a fresh checkout/);
    expect(text("system")).toMatch(/verify passed in \d+\.\d s/);
  });

  it("fails on an agent that says it is done but broke a test (draft): the failing lines, and the work still pushed", async () => {
    const failedRuns = async () => Number(/^atelier_verify_runs_total\{result="failed"\} (\d+)/m.exec(await metricsText())?.[1] ?? 0);
    const before = await failedRuns();
    const { outcome, text } = await run();
    expect(await failedRuns()).toBe(before + 1);
    const o = succeeded(outcome);
    expect(o.summary).toMatch(/^Wrote atelier-demo\/5.md/);
    expect(o.verify).toMatchObject({ passed: false, exitCode: 1, timedOut: false, rounds: 1 });
    expect(o.verify!.tail).toContain("FAILED: a file says BROKEN");
    expect(o.harvest.pushed).toBe(true);
    expect(sh(fx.remote, "show", `${remoteSha(fx.remote, "atelier/start-dev/5")}:atelier-demo/5.md`)).toContain("BROKEN");
    expect(text("stdout")).toContain("FAILED: a file says BROKEN");
    expect(text("system")).toMatch(/verify failed with exit code 1/);
    expect(text("system")).not.toMatch(/resuming the agent/);
  });

  it("with on_verify_failure: retry, the agent gets the failure as its next message and its second round passes", async () => {
    const { outcome, text } = await run({ verify: verify({ onFailure: "retry" }) });
    const o = succeeded(outcome);
    expect(o.verify).toMatchObject({ passed: true, rounds: 2 });
    expect(text("system")).toMatch(/verify failed with exit code 1[^]*resuming the agent with verify's failure \(round 2 of at most 2\)[^]*verify passed/);
    // the second round's prompt was verify's failure
    expect(text("stdout")).toContain("demo agent: first line: Atelier checked your work by running the repository's verify command");
    // one push, of the fixed work: both rounds' commits
    const head = remoteSha(fx.remote, "atelier/start-dev/5")!;
    expect(o.harvest.headSha).toBe(head);
    expect(o.harvest.commits).toHaveLength(2);
    expect(sh(fx.remote, "show", `${head}:atelier-demo/5.md`)).not.toContain("BROKEN");
  });

  it("stops resuming after max_verify_rounds and reports the last failure", async () => {
    const { outcome, text } = await run({ verify: verify({ command: "echo nope; exit 4", onFailure: "retry", maxRounds: 2 }) });
    const o = succeeded(outcome);
    expect(o.verify).toMatchObject({ passed: false, exitCode: 4, rounds: 3, tail: "nope" });
    expect(text("system")).toMatch(/verify failed after 2 resumed rounds of the agent \(max_verify_rounds\)/);
  });

  it("is stopped at its wall-clock limit", async () => {
    const { outcome } = await run({ prompt: "Add a widget", verify: verify({ command: "sleep 600" }), verifyTimeoutMs: 1_000 });
    const o = succeeded(outcome);
    expect(o.verify).toMatchObject({ passed: false, exitCode: null, timedOut: true });
    expect(o.verify!.tail).toContain("verify ran longer than its limit (1 s) and was stopped");
  });

  it("its last lines are masked like the transcript: the installation token never lands in them", async () => {
    const { outcome, text } = await run({ prompt: "Add a widget", verify: verify({ command: `echo "token: ${TOKEN}"; exit 1` }) });
    const o = succeeded(outcome);
    expect(o.verify!.tail).toMatch(/^token: \S+$/);
    expect(o.verify!.tail).not.toContain(TOKEN);
    expect(o.verify!.command).not.toContain(TOKEN);
    expect(text("stdout")).not.toContain(TOKEN);
  });

  it("unconfined (sandbox: off), verify runs in its fresh checkout all the same, and says so", async () => {
    const { outcome, text } = await run({ sandbox: "off" });
    expect(succeeded(outcome).verify).toMatchObject({ passed: false, exitCode: 1 });
    expect(text("system")).toContain("verify runs unconfined in its fresh checkout, as the agent did (no sandbox)");
  });

  it("no verify declared: the outcome says so", async () => {
    const o = succeeded((await run({ prompt: "Add a widget", verify: null })).outcome);
    expect(o.verify).toBeNull();
  });

  it("attack: what the agent left outside the harvested commit ($HOME, /tmp, an ignored file, a hook in .git) cannot make verify pass", async () => {
    const tamperer: NamedAgentSpec = { name: "tamperer", command: ["/usr/bin/sh", join(FIXTURES, "verify-tamperer.sh")], read_only_paths: [FIXTURES] };
    const { outcome, text } = await run({ agent: tamperer, prompt: "Make the tests pass" });
    // where the agent worked, its overrides make the check pass…
    expect(text("stdout")).toContain("agent's own check: all tests passed (override)");
    expect(text("stdout")).toContain("agent's check without its home and /tmp: all tests passed (override)");
    const o = succeeded(outcome);
    // …but not in verify's fresh checkout of its commit
    expect(o.verify).toMatchObject({ passed: false, exitCode: 1 });
    expect(o.verify!.tail).toContain("FAILED: a file says BROKEN");
    expect(o.verify!.tail).not.toContain("override");
    // the ignored file never reached the commit
    expect(o.harvest.commits.map((c) => c.subject)).toEqual(["Break the test"]);
  });
});
