import type { Db } from "../store/kernel/db";
import { capRows, usageRollup, type UsageRollupRow } from "../store/metering/usage-rollups";
import { nearness, type Limits } from "./limits";
import { daysOfMonth, monthKey, monthStart, parseMonthKey, resetAt } from "./month";
import { refill } from "./rate-bucket";

/**
 * Usage rolled up from the truth: finished Attempts joined to their Runs (and the Runs'
 * repositories), per UTC day, repository, Loop, agent and month; beside it, each limit and how
 * near its counter is. Every number is computed here; the pages and the API only render it.
 */

export interface UsageTotals {
  /** distinct Runs with a finished Attempt in the period */
  runs: number;
  attempts: number;
  minutes: number;
  costUsd: number;
  /** the part of costUsd that is an estimate (minutes × the roster's price), not the agent's report */
  estimatedCostUsd: number;
  tokensIn: number;
  tokensOut: number;
}

export interface CapStatus {
  scope: "installation" | "repository";
  /** the installation's account login, or the repository's owner/name */
  name: string;
  installationId: number;
  repo: string | null;
  suspended: boolean;
  limit: "monthly_runs" | "monthly_cost_usd" | "max_concurrent" | "open_rate_per_minute";
  /** 0 = unlimited */
  value: number;
  used: number;
  /** used / value; null when unlimited */
  nearness: number | null;
  /** when the counter resets (monthly limits); null for the others */
  resetAt: Date | null;
}

export interface UsageReport {
  month: string;
  from: Date;
  to: Date;
  totals: UsageTotals;
  /** every UTC day of the month, zero-filled */
  days: ({ day: string } & UsageTotals)[];
  byRepository: ({ repo: string } & UsageTotals)[];
  byLoop: ({ repo: string; loop: string } & UsageTotals)[];
  byAgent: ({ agent: string } & UsageTotals)[];
  caps: CapStatus[];
}

export interface UsageScope {
  /** `YYYY-MM`; the current UTC month by default */
  month?: string;
  /** the repositories to count (lower-cased owner/name); null = all */
  repos?: string[] | null;
  /** the installations whose limits to show; null = all */
  installationIds?: number[] | null;
}

const ZERO: UsageTotals = Object.freeze({ runs: 0, attempts: 0, minutes: 0, costUsd: 0, estimatedCostUsd: 0, tokensIn: 0, tokensOut: 0 });

const totalsOf = (r: UsageRollupRow): UsageTotals => ({
  runs: r.runs,
  attempts: r.attempts,
  minutes: r.ms / 60_000,
  costUsd: r.cost,
  estimatedCostUsd: r.est,
  tokensIn: r.tin,
  tokensOut: r.tout,
});

const byCost = <T extends UsageTotals>(a: T, b: T) => b.costUsd - a.costUsd || b.minutes - a.minutes;

export async function usageReport(db: Db, scope: UsageScope = {}): Promise<UsageReport> {
  const at = scope.month ? parseMonthKey(scope.month) ?? monthStart(new Date()) : new Date();
  const from = monthStart(at);
  const to = resetAt(at);
  const repos = scope.repos ? scope.repos.map((r) => r.toLowerCase()) : null;
  const rows = await usageRollup(db, from, to, repos);

  const days = new Map(daysOfMonth(at).map((d) => [d, { day: d, ...ZERO }]));
  const report: UsageReport = {
    month: monthKey(at),
    from,
    to,
    totals: { ...ZERO },
    days: [],
    byRepository: [],
    byLoop: [],
    byAgent: [],
    caps: [],
  };
  for (const r of rows) {
    const t = totalsOf(r);
    if (r.dim === "total") report.totals = t;
    else if (r.dim === "day" && r.day) days.set(r.day, { day: r.day, ...t });
    else if (r.dim === "repo") report.byRepository.push({ repo: r.repo!, ...t });
    else if (r.dim === "loop") report.byLoop.push({ repo: r.repo!, loop: r.loop!, ...t });
    else if (r.dim === "agent") report.byAgent.push({ agent: r.agent!, ...t });
  }
  report.days = [...days.values()];
  report.byRepository.sort(byCost);
  report.byLoop.sort(byCost);
  report.byAgent.sort(byCost);
  report.caps = await capStatus(db, { month: report.month, resetAt: to, repos, installationIds: scope.installationIds ?? null });
  return report;
}

/** Each limit of the installations and repositories in scope, with its counter. */
export async function capStatus(
  db: Db,
  opts: { month: string; resetAt: Date; repos: string[] | null; installationIds: number[] | null },
): Promise<CapStatus[]> {
  const rows = await capRows(db, opts);
  return rows.flatMap((r) => {
    const limits: Limits = {
      monthlyRuns: r.monthly_runs,
      monthlyCostUsd: r.monthly_cost_usd,
      maxConcurrent: r.max_concurrent,
      openRatePerMinute: r.open_rate_per_minute,
    };
    const rate = limits.openRatePerMinute;
    const rateUsed = rate > 0 && r.tokens !== null ? rate - refill(Math.min(r.tokens, rate), r.elapsed ?? 0, rate) : 0;
    const base = { scope: r.scope, name: r.name, installationId: r.installation_id, repo: r.repo, suspended: r.suspended };
    const cap = (limit: CapStatus["limit"], value: number, used: number, monthly: boolean): CapStatus => ({
      ...base,
      limit,
      value,
      used,
      nearness: nearness(value, used),
      resetAt: monthly ? opts.resetAt : null,
    });
    return [
      cap("monthly_runs", limits.monthlyRuns, r.runs, true),
      cap("monthly_cost_usd", limits.monthlyCostUsd, r.cost, true),
      cap("max_concurrent", limits.maxConcurrent, r.running, false),
      cap("open_rate_per_minute", rate, Math.max(0, rateUsed), false),
    ];
  });
}
