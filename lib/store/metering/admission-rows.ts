import { OPEN } from "../../engine/run-state";
import { RUN_STATE_SQL } from "../../engine/run-predicates";
import { advisoryKey } from "../kernel/locks";
import { QUOTA_WAITING_PREFIX, repoOpenRateSql } from "./repo-metering";
import { markRunsChanged } from "../runs/run-changed";
import { compile, first, query, raw, rows, sql, type Queryable } from "../kernel/sql";
import { installationUsageSql } from "./usage-counter-sql";
import type { Sql } from "../kernel/transaction";

/**
 * What the admission gate (lib/metering/) reads and writes, for one repository: its
 * installation and quotas, the month's counters, the rate buckets, the Runs running. Two modes:
 * - "lock": inside the transaction that will act on the answer: the repository's counter row
 *   and the buckets are created when missing and locked and, where the installation caps its
 *   monthly Runs, its monthly-runs lock is taken (an open); the installation's concurrency
 *   lock is taken (an Attempt's start). Concurrent opens (and starts) of one installation so
 *   decide one after another.
 * - "peek": a read-only look (the API's pre-check, the Usage page); nothing is written.
 */
export type FactsMode = "lock" | "peek";

/** A repository's installation and the quotas of both (0: not set; the repository's open rate has its default). */
export interface AdmissionTargetRow {
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

const TARGET_NAME = "atelier-admission-target";

/** The repository's installation and quotas (owner/name, lower-cased); undefined when it is not registered. */
export async function readAdmissionTarget(on: Queryable, repo: string): Promise<AdmissionTargetRow | undefined> {
  const statement = sql`
SELECT rp.installation_id, i.account_login, i.suspended_at, now() AS now,
       COALESCE(qi.monthly_runs, 0) AS i_runs, COALESCE(qi.monthly_cost_usd, 0)::float8 AS i_cost,
       COALESCE(qi.max_concurrent, 0) AS i_conc, COALESCE(qi.open_rate_per_minute, 0) AS i_rate,
       COALESCE(qr.monthly_runs, 0) AS r_runs, COALESCE(qr.monthly_cost_usd, 0)::float8 AS r_cost,
       COALESCE(qr.max_concurrent, 0) AS r_conc, ${raw(repoOpenRateSql("qr.open_rate_per_minute"))} AS r_rate
  FROM repositories rp
  JOIN installations i ON i.id = rp.installation_id
  LEFT JOIN quotas qi ON qi.installation_id = i.id
  LEFT JOIN quotas qr ON qr.repository_id = rp.id
 WHERE rp.full_name = ${repo}`;
  // prepared once per connection: asked by every gated open and start
  const { rows: found } = await (on as Sql).query<AdmissionTargetRow>({ name: TARGET_NAME, ...compile(statement) });
  return found[0];
}

/** The lock that serializes Attempt starts of one installation against its concurrency cap. */
export const concurrencyLock = (installationId: number): bigint => advisoryKey("concurrency", String(installationId));

/** Takes the installation's concurrency lock, for the rest of the transaction. */
export async function lockConcurrency(tx: Queryable, installationId: number): Promise<void> {
  await query(tx, sql`SELECT pg_advisory_xact_lock(${concurrencyLock(installationId).toString()})`);
}

/** The Runs running in the installation, and in the repository (lower-cased), not counting `exceptRunId`. */
export async function countRunning(on: Queryable, installationId: number, repo: string, exceptRunId: string | null): Promise<{ inst: number; repo: number }> {
  const counted = await first<{ inst: number; repo: number }>(
    on,
    sql`SELECT count(*)::int AS inst, count(*) FILTER (WHERE r.repo = ${repo})::int AS repo
          FROM runs r JOIN repositories rp ON rp.full_name = r.repo
         WHERE rp.installation_id = ${installationId} AND ${raw(RUN_STATE_SQL.isRunning("r.state"))}
           AND r.id IS DISTINCT FROM ${exceptRunId}`,
  );
  return counted!;
}

/** What a scope used this month: the Runs it opened, what its Attempts cost. */
export interface MonthUsage {
  runs: number;
  cost: number;
}

/** The lock that serializes the opens of one installation against its monthly Run quota. */
export const monthlyRunsLock = (installationId: number): bigint => advisoryKey("monthly-runs", String(installationId));

/**
 * Takes the installation's monthly-runs lock, for the rest of the transaction: its opens read
 * the sum of its repositories' counters one after another, each after the last one's charge.
 */
export async function lockMonthlyRuns(tx: Queryable, installationId: number): Promise<void> {
  await query(tx, sql`SELECT pg_advisory_xact_lock(${monthlyRunsLock(installationId).toString()})`);
}

/**
 * The month's usage of the repository counted under `scope` (its counter row, in "lock" mode
 * created when missing and locked) and, given `installationId`, of its installation: the sum of
 * its repositories' counters (installationUsageSql; not locked: lockMonthlyRuns serializes what
 * must be).
 */
export async function readMonthUsage(
  on: Queryable,
  q: { scope: string; month: string; mode: FactsMode; installationId: number | null },
): Promise<{ repository: MonthUsage; installation: MonthUsage | null }> {
  const { scope, month } = q;
  const repository = await first<MonthUsage>(
    on,
    q.mode === "lock"
      ? sql`INSERT INTO usage_counters (scope, month) VALUES (${scope}, ${month})
            ON CONFLICT (scope, month) DO UPDATE SET runs = usage_counters.runs
            RETURNING runs, cost_usd::float8 AS cost`
      : sql`SELECT runs, cost_usd::float8 AS cost FROM usage_counters WHERE scope = ${scope} AND month = ${month}`,
  );
  const installation = q.installationId === null ? null : await first<MonthUsage>(on, installationUsageSql(sql`${q.installationId}`, sql`${month}`));
  return { repository: repository ?? { runs: 0, cost: 0 }, installation: installation ?? null };
}

/** The buckets' tokens and seconds since their last refill; in "lock" mode created full (`perMinute`) when missing, and locked. */
export async function readRateBuckets(
  on: Queryable,
  wanted: readonly { scope: string; perMinute: number }[],
  mode: FactsMode,
): Promise<Map<string, { tokens: number; elapsed: number }>> {
  const scopes = wanted.map((w) => w.scope);
  const found = await rows<{ scope: string; tokens: number; elapsed: number }>(
    on,
    mode === "lock"
      ? sql`INSERT INTO rate_buckets (scope, tokens, refilled_at)
            SELECT s, t, now() FROM unnest(${scopes}::text[], ${wanted.map((w) => w.perMinute)}::float8[]) AS v(s, t) ORDER BY s
            ON CONFLICT (scope) DO UPDATE SET tokens = rate_buckets.tokens
            RETURNING scope, tokens, EXTRACT(EPOCH FROM now() - refilled_at)::float8 AS elapsed`
      : sql`SELECT scope, tokens, EXTRACT(EPOCH FROM now() - refilled_at)::float8 AS elapsed FROM rate_buckets WHERE scope = ANY(${scopes})`,
  );
  return new Map(found.map((r) => [r.scope, { tokens: r.tokens, elapsed: r.elapsed }]));
}

/** What an Attempt's admission reads of its Run; undefined when there is no such Run. */
export async function runAdmissionBasis(on: Queryable, runId: string): Promise<{ repo: string; waitingReason: string | null } | undefined> {
  const run = await first<{ repo: string; waiting_reason: string | null }>(on, sql`SELECT repo, waiting_reason FROM runs WHERE id = ${runId}`);
  return run && { repo: run.repo, waitingReason: run.waiting_reason };
}

/**
 * Sets (or clears) an open Run's quota waiting reason, leaving any other reason (approval)
 * alone; notifies atelier_run_changed only when it changed, so the check run says it.
 */
export async function setQuotaWaitingReason(tx: Sql, runId: string, reason: string | null): Promise<void> {
  const changed = await rows<{ id: string }>(
    tx,
    sql`UPDATE runs SET waiting_reason = ${reason}, updated_at = now()
         WHERE id = ${runId} AND state::text = ANY(${OPEN}) AND waiting_reason IS DISTINCT FROM ${reason}
           AND (waiting_reason IS NULL OR starts_with(waiting_reason, ${QUOTA_WAITING_PREFIX}))
        RETURNING id`,
  );
  await markRunsChanged(tx, changed.map((r) => r.id));
}
