import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, runEventPayload, type TerminalRunRow } from "../../lib/store/runs/run-event-payload";

const row = (over: Partial<TerminalRunRow> = {}): TerminalRunRow => ({
  id: "r1",
  loop: "start-dev",
  repo: "acme/app",
  number: 7,
  state: "Failed",
  cancel_reason: null,
  installation_id: 42,
  pull_request_number: 12,
  branch: "atelier/start-dev/7",
  head_sha: "abc123",
  received_at: "2026-11-29T10:00:00.000Z",
  started_at: "2026-11-29T10:00:01.000Z",
  ended_at: "2026-11-29T10:05:00.000Z",
  now: "2026-11-29T10:05:00.000Z",
  failure: { kind: "InfraFailure", category: "transport", retryable: true, message: "push refused: 502" },
  usage: { attempts: 3, duration_ms: 300_000, tokens_in: 10, tokens_out: 20, cost_usd: 0.3, cost_estimated: false },
  ...over,
});

describe("the run.<state> payload", () => {
  it("carries the failure of a Failed Run, the reason of a Canceled one, and nothing of the sort for a Succeeded one", () => {
    expect(runEventPayload(row())).toMatchObject({
      event: "run.failed",
      installation: { id: 42 },
      run: {
        state: "Failed",
        closed: true,
        category: "transport",
        retryable: true,
        failure: { kind: "InfraFailure", category: "transport", retryable: true },
        pull_request: { number: 12 },
      },
    });
    // every non-success ending carries a category: a Canceled Run `canceled`, not retried
    expect(runEventPayload(row({ state: "Canceled", cancel_reason: "Superseded" })).run).toMatchObject({
      closed: true,
      category: "canceled",
      retryable: false,
      cancel_reason: "Superseded",
      failure: null,
    });
    expect(runEventPayload(row({ state: "Succeeded" })).run).toMatchObject({ state: "Succeeded", closed: true, category: null, retryable: null, failure: null, cancel_reason: null });
    expect(() => runEventPayload(row({ state: "Running" }))).toThrow(/not in a terminal state/);
  });

  it("says how a Succeeded Run's work was checked: verify passed, failed, or none declared", () => {
    const stored = { passed: false, exitCode: 1, timedOut: false, durationMs: 3200, tail: "FAILED", command: "npm test", rounds: 2 };
    expect(runEventPayload(row({ state: "Succeeded", verify: stored })).run.verify).toEqual({
      result: "failed",
      command: "npm test",
      exit_code: 1,
      timed_out: false,
      duration_ms: 3200,
      rounds: 2,
    });
    expect(runEventPayload(row({ state: "Succeeded", verify: { ...stored, passed: true, exitCode: 0 } })).run.verify?.result).toBe("passed");
    expect(runEventPayload(row({ state: "Succeeded", verify: null })).run.verify).toEqual({
      result: "not_declared",
      command: null,
      exit_code: null,
      timed_out: false,
      duration_ms: null,
      rounds: null,
    });
    expect(runEventPayload(row({ verify: stored })).run.verify).toBeNull();
  });

  it("stays within 64 KB however long the failure message is", () => {
    const p = runEventPayload(row({ failure: { kind: "AgentFailure", category: "agent_exit", retryable: false, message: "x".repeat(500_000) } }));
    expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(p.run.failure!.message!.endsWith("…")).toBe(true);
  });
});
