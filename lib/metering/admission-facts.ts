import { RUN_STATE_SQL } from "../engine/run-predicates";
import { advisoryKey } from "../store/locks";
import { inPhase } from "../store/run-phase";
import type { Sql } from "../store/transaction";
import type { AdmissionFacts, Phase, ScopeFacts } from "./gate";
import { repoOpenRateSql, type Limits } from "./limits";
import { monthKey, resetAt } from "./month";
import { refill } from "./rate-bucket";
import { installationScope, repoScope } from "./scopes";

/**
 * Reads what the admission gate decides on, for one repository (and the Run asking, when an
 * Attempt starts). Two modes:
 * - "lock": inside the transaction that will act on the answer. For an open, the month's
 *   counter rows and the rate buckets are created when missing and locked; for an Attempt's
 *   start, the installation's concurrency lock is taken. Concurrent opens (and starts) of one
 *   installation so decide one after another.
 * - "peek": a read-only look (the API's pre-check, the Usage page); nothing is written.
 */
export type FactsMode = "lock" | "peek";

/** Anything that runs a query: a transaction's client or the pool. */
export type Queryable = Pick<Sql, "query">;

export interface AdmissionTarget {
  /** owner/name */
  repo: string;
  /** The Run asking to start an Attempt; it does not count against its own concurrency. */
  runId?: string | null;
}

export interface LoadedFacts {
  facts: AdmissionFacts;
  month: string;
  scopes: { installation: string; repository: string };
  /** The rate buckets asked, with the tokens available now: an admitted open takes one from each. */
  buckets: { scope: string; available: number }[];
}

interface TargetRow {
  installation_id: number;
  account_login: string;
  suspended_at: Date | null;
  now: Date;
  i_runs: number;
  i_cost: number;
  i_conc: number;
  i_rate: number;
  r_runs: number;
  r_cost: number;
  r_conc: number;
  r_rate: number;
}

const TARGET = {
  name: "atelier-admission-target",
  text: `
SELECT rp.installation_id, i.account_login, i.suspended_at, now() AS now,
       COALESCE(qi.monthly_runs, 0) AS i_runs, COALESCE(qi.monthly_cost_usd, 0)::float8 AS i_cost,
       COALESCE(qi.max_concurrent, 0) AS i_conc, COALESCE(qi.open_rate_per_minute, 0) AS i_rate,
       COALESCE(qr.monthly_runs, 0) AS r_runs, COALESCE(qr.monthly_cost_usd, 0)::float8 AS r_cost,
       COALESCE(qr.max_concurrent, 0) AS r_conc, ${repoOpenRateSql("qr.open_rate_per_minute")} AS r_rate
  FROM repositories rp
  JOIN installations i ON i.id = rp.installation_id
  LEFT JOIN quotas qi ON qi.installation_id = i.id
  LEFT JOIN quotas qr ON qr.repository_id = rp.id
 WHERE rp.full_name = $1`,
};

/** The lock that serializes Attempt starts of one installation against its concurrency cap. */
export const concurrencyLock = (installationId: number): bigint => advisoryKey("concurrency", String(installationId));

/** Null when the repository is not registered: no limits are known for it, and nothing refuses. */
export async function loadAdmissionFacts(
  sql: Queryable,
  target: AdmissionTarget,
  phases: readonly Phase[],
  mode: FactsMode,
): Promise<LoadedFacts | null> {
  const repo = target.repo.toLowerCase();
  const { rows } = await sql.query<TargetRow>({ ...TARGET, values: [repo] });
  const t = rows[0];
  if (!t) return null;
  const month = monthKey(t.now);
  const scopes = { installation: installationScope(t.installation_id), repository: repoScope(repo) };
  const limits = (p: "i" | "r"): Limits => ({
    monthlyRuns: t[`${p}_runs`],
    monthlyCostUsd: t[`${p}_cost`],
    maxConcurrent: t[`${p}_conc`],
    openRatePerMinute: t[`${p}_rate`],
  });
  const installation: ScopeFacts = {
    kind: "installation",
    name: t.account_login,
    limits: limits("i"),
    runsThisMonth: 0,
    costThisMonth: 0,
    running: 0,
    rateTokens: null,
  };
  const repository: ScopeFacts = { ...installation, kind: "repository", name: repo, limits: limits("r") };
  const both = [installation, repository] as const;
  const scopeOf = (s: ScopeFacts) => (s.kind === "installation" ? scopes.installation : scopes.repository);

  // only an open increments the counters: only an open locks them (an Attempt's start reads the cost)
  const counterMode = mode === "lock" && phases.includes("open") ? "lock" : "peek";
  const counters = await readCounters(sql, [scopes.installation, scopes.repository], month, counterMode);
  for (const s of both) {
    const c = counters.get(scopeOf(s));
    s.runsThisMonth = c?.runs ?? 0;
    s.costThisMonth = c?.cost ?? 0;
  }

  if (phases.includes("attempt") && both.some((s) => s.limits.maxConcurrent > 0)) {
    if (mode === "lock") await sql.query(`SELECT pg_advisory_xact_lock($1)`, [concurrencyLock(t.installation_id).toString()]);
    const { rows: running } = await sql.query<{ inst: number; repo: number }>(
      `SELECT count(*)::int AS inst, count(*) FILTER (WHERE r.repo = $2)::int AS repo
         FROM runs r JOIN repositories rp ON rp.full_name = r.repo
        WHERE rp.installation_id = $1 AND ${inPhase("r", "Active")} AND ${RUN_STATE_SQL.isRunning("r.state")} AND r.id IS DISTINCT FROM $3`,
      [t.installation_id, repo, target.runId ?? null],
    );
    installation.running = running[0]!.inst;
    repository.running = running[0]!.repo;
  }

  const buckets: LoadedFacts["buckets"] = [];
  const limited = both.filter((s) => s.limits.openRatePerMinute > 0);
  if (phases.includes("open") && limited.length) {
    const state = await readBuckets(sql, limited.map((s) => ({ scope: scopeOf(s), perMinute: s.limits.openRatePerMinute })), mode);
    for (const s of limited) {
      const b = state.get(scopeOf(s));
      const perMinute = s.limits.openRatePerMinute;
      s.rateTokens = b ? refill(Math.min(b.tokens, perMinute), b.elapsed, perMinute) : perMinute;
      buckets.push({ scope: scopeOf(s), available: s.rateTokens });
    }
  }

  return {
    facts: { now: t.now, resetAt: resetAt(t.now), installationId: t.installation_id, suspendedAt: t.suspended_at, installation, repository },
    month,
    scopes,
    buckets,
  };
}

/** The month's counters of the scopes; in "lock" mode created when missing and locked (scope order). */
async function readCounters(
  sql: Queryable,
  scopes: string[],
  month: string,
  mode: FactsMode,
): Promise<Map<string, { runs: number; cost: number }>> {
  const { rows } = await sql.query<{ scope: string; runs: number; cost: number }>(
    mode === "lock"
      ? `INSERT INTO usage_counters (scope, month) SELECT s, $2 FROM unnest($1::text[]) AS s ORDER BY s
         ON CONFLICT (scope, month) DO UPDATE SET runs = usage_counters.runs
         RETURNING scope, runs, cost_usd::float8 AS cost`
      : `SELECT scope, runs, cost_usd::float8 AS cost FROM usage_counters WHERE scope = ANY($1) AND month = $2`,
    [scopes, month],
  );
  return new Map(rows.map((r) => [r.scope, { runs: r.runs, cost: r.cost }]));
}

/** The buckets' tokens and seconds since their last refill; in "lock" mode created full when missing, and locked. */
async function readBuckets(
  sql: Queryable,
  wanted: { scope: string; perMinute: number }[],
  mode: FactsMode,
): Promise<Map<string, { tokens: number; elapsed: number }>> {
  const scopes = wanted.map((w) => w.scope);
  const { rows } = await sql.query<{ scope: string; tokens: number; elapsed: number }>(
    mode === "lock"
      ? `INSERT INTO rate_buckets (scope, tokens, refilled_at)
         SELECT s, t, now() FROM unnest($1::text[], $2::float8[]) AS v(s, t) ORDER BY s
         ON CONFLICT (scope) DO UPDATE SET tokens = rate_buckets.tokens
         RETURNING scope, tokens, EXTRACT(EPOCH FROM now() - refilled_at)::float8 AS elapsed`
      : `SELECT scope, tokens, EXTRACT(EPOCH FROM now() - refilled_at)::float8 AS elapsed FROM rate_buckets WHERE scope = ANY($1)`,
    mode === "lock" ? [scopes, wanted.map((w) => w.perMinute)] : [scopes],
  );
  return new Map(rows.map((r) => [r.scope, { tokens: r.tokens, elapsed: r.elapsed }]));
}
