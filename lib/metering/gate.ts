import { reached, type Limits } from "./limits";
import { ADMISSION_ORDER, type AdmissionToken, type Refusal } from "./refusal";
import { secondsUntilToken } from "./rate-bucket";

/**
 * The admission gate's decision, pure: facts in, the first refusal out, asked in the fixed
 * order of ADMISSION_ORDER. Opening a Run and starting an Attempt ask different subsets:
 * opening takes no worker slot (concurrency is asked when an Attempt starts), and starting an
 * Attempt opens nothing (rate and run quota were asked when the Run opened).
 */
export type Phase = "open" | "attempt";

export interface ScopeFacts {
  kind: "installation" | "repository";
  /** the installation's account login, or the repository's owner/name */
  name: string;
  limits: Limits;
  runsThisMonth: number;
  costThisMonth: number;
  /** Running Runs of this scope, other than the one asking */
  running: number;
  /** tokens in the open-rate bucket now; null when the rate is not limited (or not asked) */
  rateTokens: number | null;
}

export interface AdmissionFacts {
  now: Date;
  resetAt: Date;
  installationId: number;
  suspendedAt: Date | null;
  installation: ScopeFacts;
  repository: ScopeFacts;
}

/** Which phases ask each check. */
export const PHASES_OF: Record<AdmissionToken, readonly Phase[]> = {
  installation_suspended: ["open", "attempt"],
  repo_quota_exceeded: ["open", "attempt"],
  concurrency_cap_exceeded: ["attempt"],
  rate_limited: ["open"],
  monthly_cost_cap_exceeded: ["open", "attempt"],
  monthly_run_quota_exceeded: ["open"],
};

/** Seconds a Run held by the concurrency cap waits before asking again. */
export const CONCURRENCY_RETRY_SECONDS = 30;

const usd = (n: number): string => `$${n.toFixed(2)}`;
const day = (d: Date): string => d.toISOString().slice(0, 10);
const untilReset = (f: AdmissionFacts): number => Math.max(1, Math.ceil((f.resetAt.getTime() - f.now.getTime()) / 1000));
const label = (s: ScopeFacts): string => (s.kind === "installation" ? `The installation ${s.name}` : s.name);

type Check = (f: AdmissionFacts, phase: Phase) => Refusal | null;

const CHECKS: Record<AdmissionToken, Check> = {
  installation_suspended: (f) =>
    f.suspendedAt
      ? {
          token: "installation_suspended",
          message: `The GitHub App installation on ${f.installation.name} is suspended; unsuspend it on GitHub to run agents again.`,
          retryAfterSeconds: null,
          details: { scope: "installation", installation_id: f.installationId, suspended_at: f.suspendedAt.toISOString() },
        }
      : null,

  repo_quota_exceeded: (f, phase) => {
    const r = f.repository;
    const runs = phase === "open" && reached(r.limits.monthlyRuns, r.runsThisMonth);
    const cost = reached(r.limits.monthlyCostUsd, r.costThisMonth);
    if (!runs && !cost) return null;
    const what = runs
      ? `opened ${r.runsThisMonth} of its ${r.limits.monthlyRuns} Runs this month`
      : `spent ${usd(r.costThisMonth)} of its ${usd(r.limits.monthlyCostUsd)} this month`;
    return {
      token: "repo_quota_exceeded",
      message: `${r.name} ${what}; its quota resets on ${day(f.resetAt)} (UTC), or an admin can raise it on the Usage page.`,
      retryAfterSeconds: untilReset(f),
      details: {
        scope: "repository",
        repo: r.name,
        limit: runs ? r.limits.monthlyRuns : r.limits.monthlyCostUsd,
        used: runs ? r.runsThisMonth : r.costThisMonth,
        unit: runs ? "runs" : "usd",
        reset_at: f.resetAt.toISOString(),
      },
    };
  },

  concurrency_cap_exceeded: (f) => {
    const s = [f.installation, f.repository].find((x) => reached(x.limits.maxConcurrent, x.running));
    if (!s) return null;
    return {
      token: "concurrency_cap_exceeded",
      message: `${label(s)} already has ${s.running} Run${s.running === 1 ? "" : "s"} running, its cap; this Run waits for one to finish.`,
      retryAfterSeconds: CONCURRENCY_RETRY_SECONDS,
      details: { scope: s.kind, name: s.name, limit: s.limits.maxConcurrent, used: s.running },
    };
  },

  rate_limited: (f) => {
    const s = [f.installation, f.repository].find((x) => x.limits.openRatePerMinute > 0 && x.rateTokens !== null && x.rateTokens < 1);
    if (!s) return null;
    const wait = secondsUntilToken(s.rateTokens!, s.limits.openRatePerMinute);
    return {
      token: "rate_limited",
      message: `${label(s)} opens at most ${s.limits.openRatePerMinute} Run${s.limits.openRatePerMinute === 1 ? "" : "s"} a minute; try again in ${wait} s.`,
      retryAfterSeconds: wait,
      details: { scope: s.kind, name: s.name, limit: s.limits.openRatePerMinute, unit: "runs_per_minute" },
    };
  },

  monthly_cost_cap_exceeded: (f) => {
    const i = f.installation;
    if (!reached(i.limits.monthlyCostUsd, i.costThisMonth)) return null;
    return {
      token: "monthly_cost_cap_exceeded",
      message: `${label(i)} spent ${usd(i.costThisMonth)} of its ${usd(i.limits.monthlyCostUsd)} monthly cost cap; it resets on ${day(f.resetAt)} (UTC), or an admin can raise it on the Usage page.`,
      retryAfterSeconds: untilReset(f),
      details: {
        scope: "installation",
        installation_id: f.installationId,
        limit: i.limits.monthlyCostUsd,
        used: i.costThisMonth,
        unit: "usd",
        reset_at: f.resetAt.toISOString(),
      },
    };
  },

  monthly_run_quota_exceeded: (f) => {
    const i = f.installation;
    if (!reached(i.limits.monthlyRuns, i.runsThisMonth)) return null;
    return {
      token: "monthly_run_quota_exceeded",
      message: `${label(i)} opened ${i.runsThisMonth} of its ${i.limits.monthlyRuns} Runs this month; the quota resets on ${day(f.resetAt)} (UTC), or an admin can raise it on the Usage page.`,
      retryAfterSeconds: untilReset(f),
      details: {
        scope: "installation",
        installation_id: f.installationId,
        limit: i.limits.monthlyRuns,
        used: i.runsThisMonth,
        unit: "runs",
        reset_at: f.resetAt.toISOString(),
      },
    };
  },
};

/** The first refusal, in ADMISSION_ORDER, among the checks the given phases ask; null admits. */
export function decideAdmission(facts: AdmissionFacts, phases: readonly Phase[]): Refusal | null {
  for (const token of ADMISSION_ORDER) {
    const phase = phases.find((p) => PHASES_OF[token].includes(p));
    if (!phase) continue;
    const refusal = CHECKS[token](facts, phase);
    if (refusal) return refusal;
  }
  return null;
}
