import { RUN_STATE_SQL } from "../engine/run-predicates";
import type { Db } from "../store/db";
import { inPhase } from "../store/run-phase";
import { nearness, repoOpenRateSql, type Limits } from "./limits";
import { daysOfMonth, monthKey, monthStart, parseMonthKey, resetAt } from "./month";
import { refill } from "./rate-bucket";
import { INSTALLATION_SCOPE_PREFIX, REPO_SCOPE_PREFIX } from "../store/usage-counters";

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

interface RollupRow {
  dim: "day" | "repo" | "loop" | "agent" | "total";
  day: string | null;
  repo: string | null;
  loop: string | null;
  agent: string | null;
  runs: number;
  attempts: number;
  ms: number;
  cost: number;
  est: number;
  tin: number;
  tout: number;
}

const ROLLUP = `
WITH u AS (
  SELECT a.run_id, r.repo, r.loop, COALESCE(a.agent, r.agent) AS agent, to_char(a.ended_at, 'YYYY-MM-DD') AS day,
         COALESCE(a.duration_ms, 0) AS ms, COALESCE(a.tokens_in, 0) AS tin, COALESCE(a.tokens_out, 0) AS tout,
         COALESCE(a.cost_usd, 0)::float8 AS cost, a.cost_estimated
    FROM attempts a JOIN runs r ON r.id = a.run_id
   WHERE a.ended_at >= ($1::timestamptz AT TIME ZONE 'UTC') AND a.ended_at < ($2::timestamptz AT TIME ZONE 'UTC')
     AND ($3::text[] IS NULL OR r.repo = ANY($3))
)
SELECT CASE WHEN GROUPING(day) = 0 THEN 'day' WHEN GROUPING(loop) = 0 THEN 'loop' WHEN GROUPING(repo) = 0 THEN 'repo'
            WHEN GROUPING(agent) = 0 THEN 'agent' ELSE 'total' END AS dim,
       day, repo, loop, agent,
       count(DISTINCT run_id)::int AS runs, count(*)::int AS attempts, COALESCE(sum(ms), 0)::float8 AS ms,
       COALESCE(sum(cost), 0)::float8 AS cost, COALESCE(sum(cost) FILTER (WHERE cost_estimated), 0)::float8 AS est,
       COALESCE(sum(tin), 0)::float8 AS tin, COALESCE(sum(tout), 0)::float8 AS tout
  FROM u
 GROUP BY GROUPING SETS ((day), (repo), (repo, loop), (agent), ())`;

const ZERO: UsageTotals = Object.freeze({ runs: 0, attempts: 0, minutes: 0, costUsd: 0, estimatedCostUsd: 0, tokensIn: 0, tokensOut: 0 });

const totalsOf = (r: RollupRow): UsageTotals => ({
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
  const { rows } = await db.pool.query<RollupRow>(ROLLUP, [from, to, repos]);

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

interface CapRow {
  scope: "installation" | "repository";
  name: string;
  installation_id: number;
  repo: string | null;
  suspended: boolean;
  monthly_runs: number;
  monthly_cost_usd: number;
  max_concurrent: number;
  open_rate_per_minute: number;
  runs: number;
  cost: number;
  running: number;
  tokens: number | null;
  elapsed: number | null;
}

const CAPS = `
WITH inst AS (
  SELECT i.id, i.account_login, i.suspended_at IS NOT NULL AS suspended FROM installations i
   WHERE ($3::bigint[] IS NULL OR i.id = ANY($3))
     AND ($4::text[] IS NULL OR EXISTS (SELECT 1 FROM repositories x WHERE x.installation_id = i.id AND x.full_name = ANY($4)))
), repo AS (
  SELECT rp.id, rp.full_name, rp.installation_id, i.suspended_at IS NOT NULL AS suspended
    FROM repositories rp JOIN installations i ON i.id = rp.installation_id
   WHERE rp.removed_at IS NULL AND ($4::text[] IS NULL OR rp.full_name = ANY($4))
), target AS (
  SELECT 'installation' AS scope, inst.account_login AS name, inst.id AS installation_id, NULL::text AS repo, inst.suspended,
         $1::text || inst.id AS key, q.*
    FROM inst LEFT JOIN LATERAL (SELECT monthly_runs, monthly_cost_usd, max_concurrent, open_rate_per_minute
                                   FROM quotas WHERE installation_id = inst.id) q ON true
  UNION ALL
  SELECT 'repository', repo.full_name, repo.installation_id, repo.full_name, repo.suspended, $2::text || repo.full_name, q.*
    FROM repo LEFT JOIN LATERAL (SELECT monthly_runs, monthly_cost_usd, max_concurrent, open_rate_per_minute
                                   FROM quotas WHERE repository_id = repo.id) q ON true
)
SELECT t.scope, t.name, t.installation_id, t.repo, t.suspended,
       COALESCE(t.monthly_runs, 0) AS monthly_runs, COALESCE(t.monthly_cost_usd, 0)::float8 AS monthly_cost_usd,
       COALESCE(t.max_concurrent, 0) AS max_concurrent,
       CASE WHEN t.scope = 'repository' THEN ${repoOpenRateSql("t.open_rate_per_minute")} ELSE COALESCE(t.open_rate_per_minute, 0) END AS open_rate_per_minute,
       COALESCE(c.runs, 0) AS runs, COALESCE(c.cost_usd, 0)::float8 AS cost,
       (SELECT count(*)::int FROM runs r JOIN repositories x ON x.full_name = r.repo
         WHERE ${inPhase("r", "Active")} AND ${RUN_STATE_SQL.isRunning("r.state")} AND x.installation_id = t.installation_id
           AND (t.repo IS NULL OR r.repo = t.repo)) AS running,
       b.tokens, EXTRACT(EPOCH FROM now() - b.refilled_at)::float8 AS elapsed
  FROM target t
  LEFT JOIN usage_counters c ON c.scope = t.key AND c.month = $5
  LEFT JOIN rate_buckets b ON b.scope = t.key
 ORDER BY t.scope, t.name`;

/** Each limit of the installations and repositories in scope, with its counter. */
export async function capStatus(
  db: Db,
  opts: { month: string; resetAt: Date; repos: string[] | null; installationIds: number[] | null },
): Promise<CapStatus[]> {
  const { rows } = await db.pool.query<CapRow>(CAPS, [
    INSTALLATION_SCOPE_PREFIX,
    REPO_SCOPE_PREFIX,
    opts.installationIds,
    opts.repos,
    opts.month,
  ]);
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
