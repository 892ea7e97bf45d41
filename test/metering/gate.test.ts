import { describe, expect, it } from "vitest";
import { decideAdmission, type AdmissionFacts, type ScopeFacts } from "../../lib/metering/gate";
import { ADMISSION_ORDER, refusalError } from "../../lib/metering/refusal";
import { toHttpError } from "../../lib/errors";

const scope = (kind: ScopeFacts["kind"], over: Partial<ScopeFacts> = {}): ScopeFacts => ({
  kind,
  name: kind === "installation" ? "acme" : "acme/app",
  limits: { monthlyRuns: 0, monthlyCostUsd: 0, maxConcurrent: 0, openRatePerMinute: 0 },
  runsThisMonth: 0,
  costThisMonth: 0,
  running: 0,
  rateTokens: null,
  ...over,
});

const now = new Date("2026-11-29T12:00:00Z");

/** Every limit set and reached, at both scopes. */
function everythingReached(): AdmissionFacts {
  const limits = { monthlyRuns: 5, monthlyCostUsd: 10, maxConcurrent: 2, openRatePerMinute: 3 };
  const used = { runsThisMonth: 5, costThisMonth: 12.5, running: 2, rateTokens: 0.2 };
  return {
    now,
    resetAt: new Date("2026-12-01T00:00:00Z"),
    installationId: 42,
    suspendedAt: new Date("2026-11-28T00:00:00Z"),
    installation: scope("installation", { limits: { ...limits }, ...used }),
    repository: scope("repository", { limits: { ...limits }, ...used }),
  };
}

/** Lifts the limit behind one token, as an admin would. */
function lift(f: AdmissionFacts, token: (typeof ADMISSION_ORDER)[number]): void {
  const r = f.repository.limits;
  const i = f.installation.limits;
  if (token === "installation_suspended") f.suspendedAt = null;
  if (token === "repo_quota_exceeded") Object.assign(r, { monthlyRuns: 0, monthlyCostUsd: 0 });
  if (token === "concurrency_cap_exceeded") i.maxConcurrent = r.maxConcurrent = 0;
  if (token === "rate_limited") i.openRatePerMinute = r.openRatePerMinute = 0;
  if (token === "monthly_cost_cap_exceeded") i.monthlyCostUsd = 0;
  if (token === "monthly_run_quota_exceeded") i.monthlyRuns = 0;
}

describe("the admission gate's fixed order", () => {
  it("answers every limit in turn, in the one order, as each is lifted", () => {
    const f = everythingReached();
    const seen: string[] = [];
    for (;;) {
      const refusal = decideAdmission(f, ["open", "attempt"]);
      if (!refusal) break;
      seen.push(refusal.token);
      lift(f, refusal.token);
    }
    expect(seen).toEqual([...ADMISSION_ORDER]);
  });

  it("asks an open and an Attempt's start only what concerns them", () => {
    const open: string[] = [];
    const f = everythingReached();
    for (let r = decideAdmission(f, ["open"]); r; r = decideAdmission(f, ["open"])) {
      open.push(r.token);
      lift(f, r.token);
    }
    expect(open).toEqual(["installation_suspended", "repo_quota_exceeded", "rate_limited", "monthly_run_quota_exceeded", "monthly_cost_cap_exceeded"]);

    const start: string[] = [];
    const g = everythingReached();
    for (let r = decideAdmission(g, ["attempt"]); r; r = decideAdmission(g, ["attempt"])) {
      start.push(r.token);
      lift(g, r.token);
    }
    expect(start).toEqual(["installation_suspended", "repo_quota_exceeded", "concurrency_cap_exceeded", "monthly_cost_cap_exceeded"]);
  });

  it("treats 0 as unlimited at both scopes", () => {
    const f = everythingReached();
    f.suspendedAt = null;
    for (const s of [f.installation, f.repository]) s.limits = { monthlyRuns: 0, monthlyCostUsd: 0, maxConcurrent: 0, openRatePerMinute: 0 };
    expect(decideAdmission(f, ["open", "attempt"])).toBeNull();
  });

  it("holds a repository to its own concurrency cap and rate inside a roomy installation", () => {
    const f = everythingReached();
    f.suspendedAt = null;
    f.installation.limits = { monthlyRuns: 0, monthlyCostUsd: 0, maxConcurrent: 10, openRatePerMinute: 60 };
    f.installation.rateTokens = 30;
    f.repository.limits = { monthlyRuns: 0, monthlyCostUsd: 0, maxConcurrent: 2, openRatePerMinute: 1 };
    f.repository.rateTokens = 0.5;
    expect(decideAdmission(f, ["attempt"])).toMatchObject({ token: "concurrency_cap_exceeded", details: { scope: "repository", limit: 2 } });
    expect(decideAdmission(f, ["open"])).toMatchObject({ token: "rate_limited", retryAfterSeconds: 30, details: { scope: "repository" } });
  });
});

describe("refusals speak HTTP", () => {
  it("maps each token to its status, with Retry-After on 429 and reset_at on monthly 402s", () => {
    const f = everythingReached();
    const answers: Record<string, { status: number; retry?: string; reset?: unknown }> = {};
    for (let r = decideAdmission(f, ["open", "attempt"]); r; r = decideAdmission(f, ["open", "attempt"])) {
      const http = toHttpError(refusalError(r));
      expect(http.body.error).toBe(r.token);
      expect(http.body.message).toMatch(/\w/);
      answers[r.token] = { status: http.status, retry: http.headers["retry-after"], reset: http.body.reset_at };
      lift(f, r.token);
    }
    expect(answers).toEqual({
      installation_suspended: { status: 403, retry: undefined, reset: undefined },
      repo_quota_exceeded: { status: 402, retry: undefined, reset: "2026-12-01T00:00:00.000Z" },
      concurrency_cap_exceeded: { status: 429, retry: "30", reset: undefined },
      rate_limited: { status: 429, retry: "16", reset: undefined },
      monthly_cost_cap_exceeded: { status: 402, retry: undefined, reset: "2026-12-01T00:00:00.000Z" },
      monthly_run_quota_exceeded: { status: 402, retry: undefined, reset: "2026-12-01T00:00:00.000Z" },
    });
  });
});
