import { describe, expect, it } from "vitest";
import { agentFailure, budgetFailure, CATEGORY_RETRYABLE, defectFailure, infraFailure, runawayFailure } from "../../lib/engine/failure";
import { canAutoRetry, decideAfterFailure } from "../../lib/engine/retry";

describe("retry decision", () => {
  const infra = infraFailure("transport", "push got 502");
  it("retries an InfraFailure while the Attempt number is below 3", () => {
    expect(decideAfterFailure(infra, 1)).toEqual({ tag: "RetryAttempt", nextNumber: 2 });
    expect(decideAfterFailure(infra, 2)).toEqual({ tag: "RetryAttempt", nextNumber: 3 });
    expect(decideAfterFailure(infra, 3)).toEqual({ tag: "FailRun" });
    expect(decideAfterFailure(infra, 4)).toEqual({ tag: "FailRun" });
  });
  it("never retries other failures without an operator", () => {
    for (const f of [agentFailure("agent_exit", "exit 1"), runawayFailure("too long"), defectFailure("bug"), budgetFailure("cap")]) {
      expect(canAutoRetry(f, 1)).toBe(false);
    }
  });
  it("gives every failure a category and retryable flag", () => {
    expect(runawayFailure("x")).toEqual({ kind: "RunawayFailure", category: "timeout", retryable: false, message: "x" });
    expect(agentFailure("authentication", "x").retryable).toBe(false);
    expect(infraFailure("gateway_rate_limit", "x").retryable).toBe(true);
    expect(Object.keys(CATEGORY_RETRYABLE)).toContain("internal");
  });
  it("retries exactly what it reports retryable: one predicate, for every category", () => {
    for (const [category, retryable] of Object.entries(CATEGORY_RETRYABLE)) {
      const f = { kind: "InfraFailure" as const, category: category as keyof typeof CATEGORY_RETRYABLE, retryable, message: category };
      expect(canAutoRetry(f, 1), category).toBe(retryable);
    }
    // only an InfraFailure carries a retryable category; the reference's flags for its categories
    expect(Object.entries(CATEGORY_RETRYABLE).filter(([, r]) => r).map(([c]) => c).sort()).toEqual(
      ["gateway_error", "gateway_rate_limit", "gateway_timeout", "git_error", "lease_lost", "mcp_transport", "transport"].sort(),
    );
    for (const c of ["invalid_model", "mcp_discovery", "tool_denied", "canceled", "budget", "authentication"] as const) expect(CATEGORY_RETRYABLE[c]).toBe(false);
  });
});
