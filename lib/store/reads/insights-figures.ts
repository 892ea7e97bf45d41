import type { Db } from "../kernel/db";
import { first, query, raw, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

/** Which Runs Insights reads: received in [from, to), of these repositories, a Loop and an agent when given. */
export interface InsightsScope {
  repos: string[];
  loop: string | null;
  agent: string | null;
  from: Date;
  to: Date;
}

/** One group's figures as SQL counts them (seconds, dollars, milliseconds); the group is all Runs, a Loop, an agent or a week. */
export interface FigureRow {
  loop: string | null;
  agent: string | null;
  /** the week's Monday (UTC), as YYYY-MM-DD */
  week: string | null;
  /** which grouping this row is: all, loop, agent, week */
  grouping: "all" | "loop" | "agent" | "week";
  runs: number;
  merged: number;
  closed: number;
  open: number;
  no_pull_request: number;
  failed: number;
  canceled: number;
  in_progress: number;
  merged_pull_requests: number;
  to_start_p50: number | null;
  to_start_p90: number | null;
  to_pull_request_p50: number | null;
  to_pull_request_p90: number | null;
  to_merge_p50: number | null;
  to_merge_p90: number | null;
  cost_usd: string | null;
  agent_ms: string | null;
  succeeded: number;
  succeeded_attempts: number;
  verified: number;
  verify_passed: number;
}

export interface InsightsRead {
  groups: FigureRow[];
  failures: { category: string; attempts: number }[];
}

/**
 * A Run's outcome (docs/insights.md), first match wins: its pull request merged, or closed
 * unmerged; else the Run Failed, or was Canceled; else a pull request still open; else Succeeded
 * with no pull request; else still in progress.
 */
const OUTCOME = sql`CASE WHEN r.pull_request_state = 'merged' THEN 'merged'
            WHEN r.pull_request_state = 'closed' THEN 'closed'
            WHEN r.state = 'Failed' THEN 'failed'
            WHEN r.state = 'Canceled' THEN 'canceled'
            WHEN r.pull_request_number IS NOT NULL THEN 'open'
            WHEN r.state = 'Succeeded' THEN 'no_pull_request'
            ELSE 'in_progress' END`;

/**
 * A merged Run's pull request as one bigint, (the repository's place in the scope's array) << 32
 * plus its number: distinct exactly when (repo, number) is (the Run's repository is in the array,
 * a number fits in 32 bits), and counted distinct by a sort of integers, not of text.
 */
const mergedPullRequestKey = (repos: string[]) => sql`(array_position(${repos}::text[], r.repo)::bigint << 32) + r.pull_request_number`;

/** The p50 and p90 (percentile_disc: a value that occurred) of the column `seconds`, from one sort, counted where it is not null. */
const percentiles = (name: string, seconds: string) => raw(`percentile_disc(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY ${seconds}) AS ${name}`);

/**
 * Every figure of Insights in one statement: the Runs in scope (index
 * runs_repo_received_at_id_idx, one range per repository) with what they keep of their Attempts
 * (migration 20261208060000: never the Attempts themselves), then the figures of all of them, per
 * Loop, per agent and per week in one pass (GROUPING SETS), and the failed Attempts by category.
 * It runs without JIT (compiling cost more than the read) and with the memory to sort in memory.
 */
export async function readInsightsFigures(db: Db, q: InsightsScope): Promise<InsightsRead> {
  const mergedPullRequest = mergedPullRequestKey(q.repos);
  const row = await transaction(db, async (tx) => {
    await query(tx, sql`SET LOCAL jit = off`);
    await query(tx, sql`SET LOCAL work_mem = '64MB'`);
    return first<{ groups: (Omit<FigureRow, "to_start_p50" | "to_start_p90" | "to_pull_request_p50" | "to_pull_request_p90" | "to_merge_p50" | "to_merge_p90"> & Record<"to_start" | "to_pull_request" | "to_merge", [number, number] | null>)[] | null; failures: InsightsRead["failures"] | null }>(
      tx,
      sql`WITH scoped AS MATERIALIZED (
       SELECT r.loop, r.agent, r.state = 'Succeeded' AS succeeded, r.attempts_closed, r.attempts_cost_usd, r.attempts_ms, r.verify_checked, r.verify_passed,
              CASE WHEN cardinality(r.failure_categories) > 0 THEN r.failure_categories END AS failure_categories, ${OUTCOME} AS outcome,
              CASE WHEN r.pull_request_state = 'merged' THEN ${mergedPullRequest} END AS merged_pull_request,
              date_trunc('week', r.received_at)::date AS week,
              EXTRACT(EPOCH FROM r.started_at - r.received_at)::float8 AS to_start,
              EXTRACT(EPOCH FROM r.pull_request_at - r.received_at)::float8 AS to_pull_request,
              CASE WHEN r.pull_request_state = 'merged' THEN EXTRACT(EPOCH FROM r.pull_request_closed_at - r.received_at)::float8 END AS to_merge
         FROM runs r
        WHERE r.repo = ANY(${q.repos}::text[])
          AND r.received_at >= (${q.from.toISOString()}::timestamptz AT TIME ZONE 'UTC')
          AND r.received_at < (${q.to.toISOString()}::timestamptz AT TIME ZONE 'UTC')
          AND (${q.loop}::text IS NULL OR r.loop = ${q.loop})
          AND (${q.agent}::text IS NULL OR r.agent = ${q.agent})
     ), groups AS (
       SELECT s.loop, s.agent, to_char(s.week, 'YYYY-MM-DD') AS week,
              CASE WHEN GROUPING(s.loop) = 0 THEN 'loop' WHEN GROUPING(s.agent) = 0 THEN 'agent' WHEN GROUPING(s.week) = 0 THEN 'week' ELSE 'all' END AS grouping,
              count(*)::int AS runs,
              count(*) FILTER (WHERE s.outcome = 'merged')::int AS merged,
              count(*) FILTER (WHERE s.outcome = 'closed')::int AS closed,
              count(*) FILTER (WHERE s.outcome = 'open')::int AS open,
              count(*) FILTER (WHERE s.outcome = 'no_pull_request')::int AS no_pull_request,
              count(*) FILTER (WHERE s.outcome = 'failed')::int AS failed,
              count(*) FILTER (WHERE s.outcome = 'canceled')::int AS canceled,
              count(*) FILTER (WHERE s.outcome = 'in_progress')::int AS in_progress,
              count(DISTINCT s.merged_pull_request)::int AS merged_pull_requests,
              ${percentiles("to_start", "s.to_start")},
              ${percentiles("to_pull_request", "s.to_pull_request")},
              ${percentiles("to_merge", "s.to_merge")},
              sum(s.attempts_cost_usd)::text AS cost_usd, sum(s.attempts_ms)::text AS agent_ms,
              count(*) FILTER (WHERE s.succeeded)::int AS succeeded,
              COALESCE(sum(s.attempts_closed) FILTER (WHERE s.succeeded), 0)::int AS succeeded_attempts,
              sum(s.verify_checked)::int AS verified, sum(s.verify_passed)::int AS verify_passed
         FROM scoped s
        GROUP BY GROUPING SETS ((), (s.loop), (s.agent), (s.week))
     ), failures AS (
       SELECT category, count(*)::int AS attempts FROM scoped s, unnest(s.failure_categories) AS category
        WHERE s.failure_categories IS NOT NULL
        GROUP BY 1 ORDER BY 2 DESC, 1
     )
     SELECT (SELECT json_agg(g) FROM groups g) AS groups, (SELECT json_agg(f) FROM failures f) AS failures`,
    );
  });
  const groups = (row?.groups ?? []).map(({ to_start, to_pull_request, to_merge, ...g }) => ({
    ...g,
    to_start_p50: to_start?.[0] ?? null,
    to_start_p90: to_start?.[1] ?? null,
    to_pull_request_p50: to_pull_request?.[0] ?? null,
    to_pull_request_p90: to_pull_request?.[1] ?? null,
    to_merge_p50: to_merge?.[0] ?? null,
    to_merge_p90: to_merge?.[1] ?? null,
  }));
  return { groups, failures: row?.failures ?? [] };
}
