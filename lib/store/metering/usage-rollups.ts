import { RUN_STATE_SQL } from "../../engine/run-predicates";
import type { Db } from "../kernel/db";
import { repoOpenRateSql } from "./repo-metering";
import { raw, rows, sql } from "../kernel/sql";
import { INSTALLATION_SCOPE_PREFIX, installationUsageSql, REPO_SCOPE_PREFIX } from "./usage-counter-sql";

/**
 * The reads of the usage report (lib/metering/usage-report.ts): finished Attempts rolled up,
 * and each installation's and repository's limits beside their month's usage.
 */

/** One group of the rollup: a day, a repository, a Loop of one, an agent, or the total. */
export interface UsageRollupRow {
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

/**
 * The Attempts that ended in [from, to) (UTC), of the repositories `repos` (lower-cased; null:
 * all), joined to their Runs, grouped per UTC day, repository, Loop, agent, and in total.
 */
export function usageRollup(db: Db, from: Date, to: Date, repos: string[] | null): Promise<UsageRollupRow[]> {
  return rows<UsageRollupRow>(
    db.pool,
    sql`
WITH u AS (
  SELECT a.run_id, r.repo, r.loop, COALESCE(a.agent, r.agent) AS agent, to_char(a.ended_at, 'YYYY-MM-DD') AS day,
         COALESCE(a.duration_ms, 0) AS ms, COALESCE(a.tokens_in, 0) AS tin, COALESCE(a.tokens_out, 0) AS tout,
         COALESCE(a.cost_usd, 0)::float8 AS cost, a.cost_estimated
    FROM attempts a JOIN runs r ON r.id = a.run_id
   WHERE a.ended_at >= (${from}::timestamptz AT TIME ZONE 'UTC') AND a.ended_at < (${to}::timestamptz AT TIME ZONE 'UTC')
     AND (${repos}::text[] IS NULL OR r.repo = ANY(${repos}))
)
SELECT CASE WHEN GROUPING(day) = 0 THEN 'day' WHEN GROUPING(loop) = 0 THEN 'loop' WHEN GROUPING(repo) = 0 THEN 'repo'
            WHEN GROUPING(agent) = 0 THEN 'agent' ELSE 'total' END AS dim,
       day, repo, loop, agent,
       count(DISTINCT run_id)::int AS runs, count(*)::int AS attempts, COALESCE(sum(ms), 0)::float8 AS ms,
       COALESCE(sum(cost), 0)::float8 AS cost, COALESCE(sum(cost) FILTER (WHERE cost_estimated), 0)::float8 AS est,
       COALESCE(sum(tin), 0)::float8 AS tin, COALESCE(sum(tout), 0)::float8 AS tout
  FROM u
 GROUP BY GROUPING SETS ((day), (repo), (repo, loop), (agent), ())`,
  );
}

/** An installation's or a repository's limits (0: not set; a repository's open rate has its default) and their counters. */
export interface CapRow {
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

/**
 * The installations `installationIds` (null: all) that have one of `repos` (null: any), and
 * the repositories `repos` not removed, each with its limits, the month's usage, the Runs
 * running and its rate bucket; by scope, then name.
 */
export function capRows(db: Db, opts: { month: string; repos: string[] | null; installationIds: number[] | null }): Promise<CapRow[]> {
  const { month, repos, installationIds } = opts;
  return rows<CapRow>(
    db.pool,
    sql`
WITH inst AS (
  SELECT i.id, i.account_login, i.suspended_at IS NOT NULL AS suspended FROM installations i
   WHERE (${installationIds}::bigint[] IS NULL OR i.id = ANY(${installationIds}))
     AND (${repos}::text[] IS NULL OR EXISTS (SELECT 1 FROM repositories x WHERE x.installation_id = i.id AND x.full_name = ANY(${repos})))
), repo AS (
  SELECT rp.id, rp.full_name, rp.installation_id, i.suspended_at IS NOT NULL AS suspended
    FROM repositories rp JOIN installations i ON i.id = rp.installation_id
   WHERE rp.removed_at IS NULL AND (${repos}::text[] IS NULL OR rp.full_name = ANY(${repos}))
), target AS (
  SELECT 'installation' AS scope, inst.account_login AS name, inst.id AS installation_id, NULL::text AS repo, inst.suspended,
         ${INSTALLATION_SCOPE_PREFIX}::text || inst.id AS key, q.*
    FROM inst LEFT JOIN LATERAL (SELECT monthly_runs, monthly_cost_usd, max_concurrent, open_rate_per_minute
                                   FROM quotas WHERE installation_id = inst.id) q ON true
  UNION ALL
  SELECT 'repository', repo.full_name, repo.installation_id, repo.full_name, repo.suspended, ${REPO_SCOPE_PREFIX}::text || repo.full_name, q.*
    FROM repo LEFT JOIN LATERAL (SELECT monthly_runs, monthly_cost_usd, max_concurrent, open_rate_per_minute
                                   FROM quotas WHERE repository_id = repo.id) q ON true
)
SELECT t.scope, t.name, t.installation_id, t.repo, t.suspended,
       COALESCE(t.monthly_runs, 0) AS monthly_runs, COALESCE(t.monthly_cost_usd, 0)::float8 AS monthly_cost_usd,
       COALESCE(t.max_concurrent, 0) AS max_concurrent,
       CASE WHEN t.scope = 'repository' THEN ${raw(repoOpenRateSql("t.open_rate_per_minute"))} ELSE COALESCE(t.open_rate_per_minute, 0) END AS open_rate_per_minute,
       COALESCE(c.runs, 0) AS runs, COALESCE(c.cost, 0) AS cost,
       (SELECT count(*)::int FROM runs r JOIN repositories x ON x.full_name = r.repo
         WHERE ${raw(RUN_STATE_SQL.isRunning("r.state"))} AND x.installation_id = t.installation_id
           AND (t.repo IS NULL OR r.repo = t.repo)) AS running,
       b.tokens, EXTRACT(EPOCH FROM now() - b.refilled_at)::float8 AS elapsed
  FROM target t
  -- a repository's counter; an installation's month, the sum of its repositories' counters
  LEFT JOIN LATERAL (
    SELECT uc.runs, uc.cost_usd::float8 AS cost FROM usage_counters uc WHERE t.scope = 'repository' AND uc.scope = t.key AND uc.month = ${month}
    UNION ALL
    SELECT iu.runs, iu.cost FROM (${installationUsageSql(raw("t.installation_id"), sql`${month}`)}) iu WHERE t.scope = 'installation'
  ) c ON true
  LEFT JOIN rate_buckets b ON b.scope = t.key
 ORDER BY t.scope, t.name`,
  );
}
