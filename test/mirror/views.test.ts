import { describe, expect, it } from "vitest";
import { agentFailure, infraFailure } from "../../lib/engine/failure";
import { RUN_STATES } from "../../lib/engine/run-state";
import { requestedOperatorAction } from "../../lib/mirror/check-run-actions";
import { CHECK_ACTIONS, checkRunView } from "../../lib/mirror/check-run-view";
import { checkHeadSha } from "../../lib/mirror/check-target";
import { GitHubCallError, gitHubCallError, isTransientGitHubError, retryAfterMs } from "../../lib/mirror/github-client";
import { commentsOnItems } from "../../lib/mirror/loop-feedback";
import { mirrorRetryDelayMs } from "../../lib/mirror/mirror-retry";
import { isRunComment, runCommentBody, runCommentMarker } from "../../lib/mirror/run-comment-view";
import { formatCost, formatDuration } from "../../lib/mirror/run-presentation";
import type { RunSnapshot } from "../../lib/mirror/run-snapshot";

const URL_ = "https://atelier.example";

function snap(over: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    id: "0123456789abcdef0123456789abcdef",
    loop: "review",
    repo: "acme/api",
    number: 7,
    itemKind: "pull_request",
    itemHeadSha: "a".repeat(40),
    state: "Pending",
    cancelReason: null,
    waitingReason: null,
    pullRequestNumber: null,
    headSha: null,
    startedAt: null,
    endedAt: null,
    version: "2026-01-01 00:00:00",
    latestAttempt: null,
    durationMs: null,
    costUsd: null,
    costEstimated: false,
    costExact: false,
    model: null,
    turns: null,
    installationId: 1,
    repoConfig: null,
    prompt: "Review #7",
    approvalReason: null,
    verify: null,
    reviewReason: null,
    ...over,
  };
}

const failed = (kind = agentFailure("agent_exit", "exit 2")) =>
  snap({ state: "Failed", latestAttempt: { number: 2, state: "Failed", failure: { kind: kind.kind, category: kind.category, message: kind.message } } });

describe("checkRunView maps a Run to its check run", () => {
  it.each([
    ["Pending", snap(), "queued", null],
    ["Queued", snap({ state: "Queued" }), "queued", null],
    ["Waiting", snap({ state: "Waiting", waitingReason: "approval" }), "completed", "action_required"],
    ["Running", snap({ state: "Running" }), "in_progress", null],
    ["Succeeded", snap({ state: "Succeeded" }), "completed", "success"],
    ["Failed", failed(), "completed", "failure"],
    ["Canceled by an operator", snap({ state: "Canceled", cancelReason: "OperatorCanceled" }), "completed", "cancelled"],
    ["Revoked", snap({ state: "Canceled", cancelReason: "Revoked" }), "completed", "cancelled"],
    ["Superseded", snap({ state: "Canceled", cancelReason: "Superseded" }), "completed", "skipped"],
  ] as const)("%s → %s / %s", (_name, s, status, conclusion) => {
    const view = checkRunView(s, URL_);
    expect(view).toMatchObject({ status, conclusion, name: "atelier / review", externalId: s.id });
    expect(view.detailsUrl).toBe(`${URL_}/runs/${s.id}`);
  });

  it("asks for approval with an Approve button and the Run page as details_url", () => {
    const view = checkRunView(snap({ state: "Waiting", waitingReason: "approval" }), `${URL_}/`);
    expect(view.actions.map((a) => a.identifier)).toEqual(["approve", "cancel"]);
    expect(view.detailsUrl).toBe(`${URL_}/runs/0123456789abcdef0123456789abcdef`);
  });

  it("shows the approver the exact prompt, in a fence the prompt cannot close, and who started it (attacks 10, 11)", () => {
    const prompt = "Implement #7\n```\nnot the end\n```";
    const view = checkRunView(
      snap({ state: "Waiting", waitingReason: "approval", prompt, approvalReason: { token: "actor_cannot_write", login: "stranger", permission: "none", needs: "write" } }),
      URL_,
    );
    expect(view.output.summary).toContain("Started by stranger, who cannot write (no access; the Loop review needs write) — approve?");
    expect(view.output.summary).toContain(`The agent will get exactly this prompt:\n\n\`\`\`\`text\n${prompt}\n\`\`\`\``);
  });

  it("says a prompt is clipped, with its length, and offers no Approve beside a part of it", () => {
    const prompt = `${"x".repeat(60_000)}hidden`;
    const view = checkRunView(snap({ state: "Waiting", waitingReason: "approval", prompt }), URL_);
    expect(view.actions.map((a) => a.identifier)).toEqual(["cancel"]);
    expect(view.output.title).toBe("Waiting for approval on the Run page");
    expect(view.output.summary).toContain("The first 60,000 of its 60,006 characters (the rest is only on the Run page)");
    expect(view.output.summary).not.toContain("hidden");
    expect(view.output.summary).not.toContain("exactly this prompt");
  });

  it("tells the approver plainly whether CI will run the agent's code with the repository's secrets (ADR 0058)", () => {
    const waiting = { state: "Waiting", waitingReason: "approval" } as const;
    expect(checkRunView(snap(waiting), URL_).output.summary).toContain(
      "its commits are pushed to a branch at once: the repository's CI runs them with its secrets, before anyone reviews them.",
    );
    const steered = snap({ ...waiting, reviewReason: { token: "steered", login: "stranger", permission: "read", where: "item" } });
    expect(checkRunView(steered, URL_).output.summary).toContain("its commits wait for a writer's review before any branch (and CI, with the repository's secrets) has them.");
  });

  it("a Run whose commits wait for review says so, who may have steered it, and offers no button (Push is on the Run page, beside the diff)", () => {
    const view = checkRunView(snap({ state: "Reviewing", reviewReason: { token: "steered", login: "stranger", permission: "none", where: "item" } }), URL_);
    expect(view).toMatchObject({ status: "completed", conclusion: "action_required", actions: [] });
    expect(view.output.title).toBe("Waiting for review");
    expect(view.output.summary).toContain("no workflow has run them");
    expect(view.output.summary).toContain("the item's text by stranger, who cannot write (no access)");
    expect(runCommentBody(snap({ state: "Reviewing" }), URL_)).toContain("**Waiting for review**");
  });

  it("says the attempt number while running, the next one once the last ended", () => {
    const open = snap({ state: "Running", latestAttempt: { number: 3, state: "Running", failure: null } });
    expect(checkRunView(open, URL_).output.title).toBe("Attempt 3");
    const between = snap({ state: "Running", latestAttempt: { number: 1, state: "Failed", failure: null } });
    expect(checkRunView(between, URL_).output.title).toBe("Attempt 2");
  });

  it("puts the failure's kind and category in the output and offers Retry", () => {
    const view = checkRunView(failed(infraFailure("transport", "push refused: 502")), URL_);
    expect(view.output.title).toBe("Failed: InfraFailure (transport)");
    expect(view.output.summary).toContain("Attempt 2 failed with InfraFailure (transport).");
    expect(view.output.summary).toContain("The network failed it (retryable: Atelier retried it by itself, up to 3 Attempts); the details are on the Run page.");
    expect(view.output.summary).not.toContain("push refused: 502"); // a message may quote the agent: never on GitHub
    expect(view.actions).toEqual([CHECK_ACTIONS.retry]);
  });

  it("says why a quota holds the Run", () => {
    const view = checkRunView(snap({ state: "Queued", waitingReason: "quota:concurrency_cap_exceeded" }), URL_);
    expect(view.output.title).toBe("Held");
    expect(view.output.summary).toContain("concurrency cap");
  });

  it("says a Run parked by engine failures waits for an operator, in words", () => {
    const view = checkRunView(snap({ state: "Waiting", waitingReason: "engine_failed" }), URL_);
    expect(view.output.title).toBe("Held");
    expect(view.output.summary).toContain("an engine failure, not the agent's");
    expect(view.output.summary).not.toContain("engine_failed");
    expect(view.actions.map((a) => a.identifier)).toEqual(["retry", "cancel"]);
  });

  it("keeps GitHub's limits on every state: ≤ 3 actions, label ≤ 20, description ≤ 40, identifier ≤ 20", () => {
    for (const state of RUN_STATES) {
      const view = checkRunView(snap({ state, cancelReason: state === "Canceled" ? "OperatorCanceled" : null }), URL_);
      expect(view.actions.length).toBeLessThanOrEqual(3);
      for (const a of view.actions) {
        expect(a.label.length).toBeLessThanOrEqual(20);
        expect(a.description.length).toBeLessThanOrEqual(40);
        expect(a.identifier.length).toBeLessThanOrEqual(20);
      }
      expect(view.conclusion === null).toBe(view.status !== "completed");
    }
  });
});

describe("the Run's comment", () => {
  it("starts with the hidden marker and recognizes only its own Run", () => {
    const body = runCommentBody(snap(), URL_);
    expect(body.startsWith(runCommentMarker(snap().id))).toBe(true);
    expect(isRunComment(body, snap().id)).toBe(true);
    expect(isRunComment(body, "ffffffffffffffffffffffffffffffff")).toBe(false);
    expect(isRunComment(null, snap().id)).toBe(false);
  });

  it("ends with duration, cost and the pull request", () => {
    const body = runCommentBody(snap({ state: "Succeeded", durationMs: 3_723_000, costUsd: 1.5, costEstimated: true, pullRequestNumber: 12 }), URL_);
    expect(body).toContain("**Succeeded** — duration 1h 02m · cost ~$1.50 · pull request #12.");
  });

  it("shows the model, the turns, the duration and the exact cost the agent reported, as claude-code-action does", () => {
    const reported = { durationMs: 12_000, costUsd: 0.4, costExact: true, model: "claude-sonnet-4-5", turns: 3 };
    const body = runCommentBody(snap({ state: "Succeeded", ...reported, pullRequestNumber: 12 }), URL_);
    expect(body).toContain("**Succeeded** — model `claude-sonnet-4-5` · 3 turns · duration 12s · cost $0.40 (exact) · pull request #12.");
    const check = checkRunView(snap({ state: "Succeeded", ...reported }), URL_);
    expect(check.output.summary).toContain("Model `claude-sonnet-4-5` · 3 turns · duration 12s · cost $0.40 (exact).");
    const failedRun = runCommentBody({ ...failed(), ...reported, turns: 1 }, URL_);
    expect(failedRun).toContain("model `claude-sonnet-4-5` · 1 turn · duration 12s · cost $0.40 (exact)");
    expect(checkRunView({ ...failed(), ...reported, turns: 1 }, URL_).output.summary).toContain(
      "the details are on the Run page. Model `claude-sonnet-4-5` · 1 turn · duration 12s · cost $0.40 (exact).",
    );
  });

  it("never posts a model name that is not a plain identifier: the agent wrote it", () => {
    for (const model of ["x` [click](https://evil.example) `", "a b", "@everyone", "<img src=x>", "m".repeat(101)]) {
      const body = runCommentBody(snap({ state: "Succeeded", durationMs: 1_000, model }), URL_);
      expect(body).toContain("**Succeeded** — duration 1s.");
      expect(checkRunView(snap({ state: "Succeeded", model }), URL_).output.summary).not.toContain(model);
    }
  });
});

describe("small helpers", () => {
  it("formats durations and costs", () => {
    expect(formatDuration(45_400)).toBe("45s");
    expect(formatDuration(192_000)).toBe("3m 12s");
    expect(formatCost(0.004, false)).toBe("<$0.01");
    expect(formatCost(0, false)).toBe("$0.00");
  });

  it("puts the check on the Run's own pull request head, else keeps the head it was first shown on", () => {
    const sha = (c: string) => c.repeat(40);
    expect(checkHeadSha({ pullRequestNumber: 9, headSha: sha("b"), itemKind: "issue", itemHeadSha: null }, null)).toBe(sha("b"));
    expect(checkHeadSha({ pullRequestNumber: null, headSha: null, itemKind: "issue", itemHeadSha: null }, null)).toBeNull();
    expect(checkHeadSha({ pullRequestNumber: null, headSha: null, itemKind: "pull_request", itemHeadSha: sha("c") }, null)).toBe(sha("c"));
    expect(checkHeadSha({ pullRequestNumber: null, headSha: null, itemKind: "pull_request", itemHeadSha: sha("c") }, sha("a"))).toBe(sha("a"));
  });

  it("reads feedback.comment per Loop, default true", () => {
    expect(commentsOnItems(null, "x")).toBe(true);
    expect(commentsOnItems({ loops: [{ name: "x", feedback: { comment: false } }] }, "x")).toBe(false);
    expect(commentsOnItems({ loops: [{ name: "y", feedback: { comment: false } }] }, "x")).toBe(true);
  });

  it("maps check_run events to operator actions", () => {
    expect(requestedOperatorAction({ action: "rerequested" })).toBe("retry");
    expect(requestedOperatorAction({ action: "requested_action", requested_action: { identifier: "approve" } })).toBe("approve");
    expect(requestedOperatorAction({ action: "requested_action", requested_action: { identifier: "deploy" } })).toBeNull();
    expect(requestedOperatorAction({ action: "completed" })).toBeNull();
  });

  it("retries GitHub's 5xx and rate limits, honouring Retry-After, and gives up on other refusals", () => {
    const err = (status: number, headers: Record<string, string> = {}) => Object.assign(new Error("x"), { status, response: { headers } });
    expect(isTransientGitHubError(err(502))).toBe(true);
    expect(isTransientGitHubError(err(403, { "retry-after": "30" }))).toBe(true);
    expect(isTransientGitHubError(err(403, { "x-ratelimit-remaining": "0" }))).toBe(true);
    expect(isTransientGitHubError(err(403))).toBe(false);
    expect(isTransientGitHubError(err(422))).toBe(false);
    expect(retryAfterMs(err(429, { "retry-after": "7" }))).toBe(7_000);
    expect(retryAfterMs(err(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "100" }), 90_000)).toBe(10_000);
    const limited = gitHubCallError(err(403, { "retry-after": "30" }), "create a check run");
    expect(limited).toMatchObject({ retryable: true, retryAfterMs: 30_000, token: "github_unavailable" });
    expect(mirrorRetryDelayMs(1, limited)).toBe(30_250);
    expect(mirrorRetryDelayMs(1, new Error("db"))).toBe(1_000);
    expect(mirrorRetryDelayMs(4, new Error("db"))).toBe(8_000);
    expect(mirrorRetryDelayMs(30, new Error("db"))).toBe(300_000);
    expect(gitHubCallError(err(404), "x")).toBeInstanceOf(GitHubCallError);
    expect(gitHubCallError(err(404), "x").retryable).toBe(false);
  });
});

describe("verify's result on the check run and the comment", () => {
  const verify = (passed: boolean) => ({
    passed,
    exitCode: passed ? 0 : 1,
    timedOut: false,
    durationMs: 3_200,
    tail: passed ? "all tests passed" : "FAILED: widget.test.ts\n``` a fence in the output",
    command: "npm test",
    rounds: passed ? 2 : 1,
  });

  it("failed: the check run fails, says the pull request is a draft and shows the last lines", () => {
    const v = checkRunView(snap({ state: "Succeeded", pullRequestNumber: 12, verify: verify(false) }), URL_);
    expect(v.conclusion).toBe("failure");
    expect(v.output.title).toBe("Verify failed");
    expect(v.output.summary).toContain("The agent succeeded and verify failed. Pull request #12 (a draft).");
    expect(v.output.summary).toContain("Verify `npm test` failed with exit code 1 after 3.2 s.");
    expect(v.output.summary).toContain("````text\nFAILED: widget.test.ts\n``` a fence in the output\n````");
  });

  it("passed: success, with the rounds the agent was resumed; none declared: said too", () => {
    const v = checkRunView(snap({ state: "Succeeded", verify: verify(true) }), URL_);
    expect(v.conclusion).toBe("success");
    expect(v.output.title).toBe("Succeeded, verify passed");
    expect(v.output.summary).toContain("Verify `npm test` passed in 3.2 s (after 1 resumed round of the agent).");
    expect(checkRunView(snap({ state: "Succeeded" }), URL_).output.summary).toMatch(/^The agent succeeded; the repository declares no verify\./);
  });

  it("the comment says it", () => {
    const body = runCommentBody(snap({ state: "Succeeded", pullRequestNumber: 12, verify: verify(false) }), URL_);
    expect(body).toContain("**Succeeded, verify failed** — pull request #12.");
    expect(body).toContain("<details open><summary>The last lines of its output</summary>");
    expect(runCommentBody(snap({ state: "Succeeded", verify: verify(true) }), URL_)).toContain("Verify `npm test` passed in 3.2 s");
  });
});
