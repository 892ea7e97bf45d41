import type { Db } from "../../lib/store/kernel/db";

/**
 * The Insights roll-up (`insights_days`, ADR 0092) of some repositories as the triggers kept it,
 * and as counted afresh from their Runs by a statement of its own: equal when the triggers moved
 * every Run where it belongs. Arrays sorted, categories counted zero left out, empty days left out.
 */

const ROLLED_UP = `
  SELECT d.repository_id::text AS repository_id, to_char(d.day, 'YYYY-MM-DD') AS day, d.loop, d.agent, d.runs, d.merged, d.closed, d.open,
         d.no_pull_request, d.failed, d.canceled, d.in_progress, d.succeeded, d.succeeded_attempts, d.cost_usd::text AS cost_usd,
         d.agent_ms::text AS agent_ms, d.verified, d.verify_passed,
         COALESCE((SELECT jsonb_object_agg(f.key, f.value) FROM jsonb_each(d.failures) f WHERE f.value <> '0'), '{}') AS failures,
         ARRAY(SELECT unnest(d.to_start_ms) ORDER BY 1)::text[] AS to_start_ms,
         ARRAY(SELECT unnest(d.to_pull_request_ms) ORDER BY 1)::text[] AS to_pull_request_ms,
         ARRAY(SELECT unnest(d.to_merge_ms) ORDER BY 1)::text[] AS to_merge_ms,
         ARRAY(SELECT unnest(d.merged_pull_requests) ORDER BY 1) AS merged_pull_requests
    FROM insights_days d
   WHERE d.repository_id IN (SELECT id FROM repositories WHERE full_name = ANY($1::text[])) AND d.runs <> 0
   ORDER BY 1, 2, 3, 4`;

const COUNTED = `
  WITH r AS (
    SELECT r.*, CASE WHEN r.pull_request_state = 'merged' THEN 'merged' WHEN r.pull_request_state = 'closed' THEN 'closed'
                     WHEN r.state = 'Failed' THEN 'failed' WHEN r.state = 'Canceled' THEN 'canceled'
                     WHEN r.pull_request_number IS NOT NULL THEN 'open' WHEN r.state = 'Succeeded' THEN 'no_pull_request'
                     ELSE 'in_progress' END AS outcome
      FROM runs r WHERE r.repo = ANY($1::text[])
  )
  SELECT r.repository_id::text AS repository_id, to_char(r.received_at, 'YYYY-MM-DD') AS day, r.loop, r.agent, count(*)::int AS runs,
         count(*) FILTER (WHERE outcome = 'merged')::int AS merged, count(*) FILTER (WHERE outcome = 'closed')::int AS closed,
         count(*) FILTER (WHERE outcome = 'open')::int AS open, count(*) FILTER (WHERE outcome = 'no_pull_request')::int AS no_pull_request,
         count(*) FILTER (WHERE outcome = 'failed')::int AS failed, count(*) FILTER (WHERE outcome = 'canceled')::int AS canceled,
         count(*) FILTER (WHERE outcome = 'in_progress')::int AS in_progress, count(*) FILTER (WHERE r.state = 'Succeeded')::int AS succeeded,
         COALESCE(sum(r.attempts_closed) FILTER (WHERE r.state = 'Succeeded'), 0)::int AS succeeded_attempts,
         sum(r.attempts_cost_usd)::numeric(20,6)::text AS cost_usd, sum(r.attempts_ms)::text AS agent_ms,
         sum(r.verify_checked)::int AS verified, sum(r.verify_passed)::int AS verify_passed,
         COALESCE((SELECT jsonb_object_agg(c, n) FROM (SELECT c, count(*) AS n FROM runs x, unnest(x.failure_categories) c
                    WHERE x.id = ANY(array_agg(r.id)) GROUP BY c) f), '{}') AS failures,
         COALESCE(array_agg((EXTRACT(EPOCH FROM r.started_at - r.received_at) * 1000)::bigint::text ORDER BY r.started_at - r.received_at)
                    FILTER (WHERE r.started_at IS NOT NULL), '{}') AS to_start_ms,
         COALESCE(array_agg((EXTRACT(EPOCH FROM r.pull_request_at - r.received_at) * 1000)::bigint::text ORDER BY r.pull_request_at - r.received_at)
                    FILTER (WHERE r.pull_request_at IS NOT NULL), '{}') AS to_pull_request_ms,
         COALESCE(array_agg((EXTRACT(EPOCH FROM r.pull_request_closed_at - r.received_at) * 1000)::bigint::text ORDER BY r.pull_request_closed_at - r.received_at)
                    FILTER (WHERE outcome = 'merged'), '{}') AS to_merge_ms,
         COALESCE(array_agg(r.pull_request_number ORDER BY r.pull_request_number) FILTER (WHERE outcome = 'merged'), '{}') AS merged_pull_requests
    FROM r
   GROUP BY 1, 2, 3, 4
   ORDER BY 1, 2, 3, 4`;

export async function rolledUp(db: Db, repos: string[]): Promise<Record<string, unknown>[]> {
  return (await db.pool.query(ROLLED_UP, [repos])).rows;
}

export async function countedAfresh(db: Db, repos: string[]): Promise<Record<string, unknown>[]> {
  return (await db.pool.query(COUNTED, [repos])).rows;
}
