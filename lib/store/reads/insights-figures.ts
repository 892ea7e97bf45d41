import type { Db } from "../kernel/db";
import { first, query, raw, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

/** Which Runs Insights reads: received in [from, to) (whole UTC days), of these repositories, a Loop and an agent when given. */
export interface InsightsScope {
  repos: string[];
  loop: string | null;
  agent: string | null;
  from: Date;
  to: Date;
}

/**
 * The roll-up of one repository, Loop, agent and week (its Monday, YYYY-MM-DD): the sums of its
 * days, and each of its Runs' times (milliseconds) and merged pull requests' numbers, in no order.
 */
export interface InsightsCell {
  repositoryId: string;
  loop: string;
  agent: string;
  week: string;
  runs: number;
  merged: number;
  closed: number;
  open: number;
  no_pull_request: number;
  failed: number;
  canceled: number;
  in_progress: number;
  succeeded: number;
  succeeded_attempts: number;
  /** millionths of a dollar, an integer */
  cost_micro_usd: number;
  agent_ms: number;
  verified: number;
  verify_passed: number;
  to_start_ms: Float64Array;
  to_pull_request_ms: Float64Array;
  to_merge_ms: Float64Array;
  merged_pull_requests: Float64Array;
}

export interface InsightsRead {
  cells: InsightsCell[];
  failures: { category: string; attempts: number }[];
}

interface CellRow extends Omit<InsightsCell, "to_start_ms" | "to_pull_request_ms" | "to_merge_ms" | "merged_pull_requests" | "cost_micro_usd" | "agent_ms"> {
  cost_micro_usd: string;
  agent_ms: string;
  to_start_ms: number[];
  to_pull_request_ms: number[];
  to_merge_ms: number[];
  merged_pull_requests: number[];
}

/**
 * Every element of the arrays `column` of the group's rows as one JSON array, written by
 * string_agg (empty arrays skipped): JSON's numbers are parsed natively on the way in.
 */
const joined = (column: string) => raw(`('[' || COALESCE(string_agg(NULLIF(array_to_string(d.${column}, ','), ''), ','), '') || ']')::json`);

/**
 * What Insights reads, from the roll-up `insights_days` (ADR 0092), never the Runs: the days in
 * range of the repositories in scope (by their GitHub ids; its primary key), summed per
 * repository, Loop, agent and week; and the failed Attempts by category. The percentiles and
 * the distinct merged pull requests are the caller's (lib/dashboard/insights-groups.ts).
 */
export async function readInsightsFigures(db: Db, q: InsightsScope): Promise<InsightsRead> {
  const row = await transaction(db, async (tx) => {
    // the grouping hashes in memory, uncompiled (JIT cost more than the read)
    await query(tx, sql`SET LOCAL work_mem = '32MB'`);
    await query(tx, sql`SET LOCAL jit = off`);
    return first<{ cells: CellRow[] | null; failures: InsightsRead["failures"] | null }>(
      tx,
      sql`WITH scoped AS (
       SELECT d.* FROM insights_days d
        WHERE d.repository_id IN (SELECT p.id FROM repositories p WHERE p.full_name = ANY(${q.repos}::text[]))
          AND d.day >= (${q.from.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date
          AND d.day < (${q.to.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date
          AND (${q.loop}::text IS NULL OR d.loop = ${q.loop})
          AND (${q.agent}::text IS NULL OR d.agent = ${q.agent})
          AND d.runs > 0
     ), cells AS (
       SELECT d.repository_id::text AS "repositoryId", d.loop, d.agent, to_char(date_trunc('week', d.day), 'YYYY-MM-DD') AS week,
              sum(d.runs)::int AS runs, sum(d.merged)::int AS merged, sum(d.closed)::int AS closed, sum(d.open)::int AS open,
              sum(d.no_pull_request)::int AS no_pull_request, sum(d.failed)::int AS failed, sum(d.canceled)::int AS canceled,
              sum(d.in_progress)::int AS in_progress, sum(d.succeeded)::int AS succeeded, sum(d.succeeded_attempts)::int AS succeeded_attempts,
              (sum(d.cost_usd) * 1000000)::bigint::text AS cost_micro_usd, sum(d.agent_ms)::text AS agent_ms,
              sum(d.verified)::int AS verified, sum(d.verify_passed)::int AS verify_passed,
              ${joined("to_start_ms")} AS to_start_ms, ${joined("to_pull_request_ms")} AS to_pull_request_ms,
              ${joined("to_merge_ms")} AS to_merge_ms, ${joined("merged_pull_requests")} AS merged_pull_requests
         FROM scoped d
        GROUP BY 1, 2, 3, 4
     ), failures AS (
       SELECT f.key AS category, sum(f.value::int)::int AS attempts FROM scoped d, jsonb_each_text(d.failures) f
        GROUP BY 1 HAVING sum(f.value::int) > 0 ORDER BY 2 DESC, 1
     )
     SELECT (SELECT json_agg(c) FROM cells c) AS cells, (SELECT json_agg(f) FROM failures f) AS failures`,
    );
  });
  const cells = (row?.cells ?? []).map((c) => ({
    ...c,
    cost_micro_usd: Number(c.cost_micro_usd),
    agent_ms: Number(c.agent_ms),
    to_start_ms: Float64Array.from(c.to_start_ms),
    to_pull_request_ms: Float64Array.from(c.to_pull_request_ms),
    to_merge_ms: Float64Array.from(c.to_merge_ms),
    merged_pull_requests: Float64Array.from(c.merged_pull_requests),
  }));
  return { cells, failures: row?.failures ?? [] };
}
