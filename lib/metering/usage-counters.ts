import type { Sql } from "../store/transaction";
import type { LoadedFacts } from "./admission-facts";
import { MONTH_OF_NOW_SQL } from "./month";
import { INSTALLATION_SCOPE_PREFIX, REPO_SCOPE_PREFIX } from "./scopes";

/**
 * Writes to the month's counters (`usage_counters`) and rate buckets, always inside the
 * transaction that makes the fact they count: a rolled-back open or Attempt counts nothing.
 */

/** An admitted open: one Run on the installation's and the repository's counters, one token from each limited bucket. */
export async function chargeOpen(sql: Sql, loaded: LoadedFacts): Promise<void> {
  await sql.query(
    `WITH c AS (UPDATE usage_counters SET runs = runs + 1 WHERE month = $1 AND scope = ANY($2) RETURNING 1),
          b AS (UPDATE rate_buckets rb SET tokens = v.tokens, refilled_at = now()
                  FROM unnest($3::text[], $4::float8[]) AS v(scope, tokens) WHERE rb.scope = v.scope RETURNING 1)
     SELECT (SELECT count(*) FROM c) AS counters, (SELECT count(*) FROM b) AS buckets`,
    [
      loaded.month,
      [loaded.scopes.installation, loaded.scopes.repository],
      loaded.buckets.map((b) => b.scope),
      loaded.buckets.map((b) => b.available - 1),
    ],
  );
}

/**
 * A finished Attempt: its cost and minutes onto the month's counters of its installation and
 * repository (the cost cap reads them). Called by finishAttempt in its transaction, once per
 * Attempt (the lease-fenced update that precedes it matches one row at most).
 */
export async function recordAttemptUsage(sql: Sql, attemptId: string): Promise<void> {
  await sql.query(
    `INSERT INTO usage_counters (scope, month, runs, cost_usd, minutes)
     SELECT s.scope, ${MONTH_OF_NOW_SQL}, 0, COALESCE(a.cost_usd, 0), COALESCE(a.duration_ms, 0) / 60000.0
       FROM attempts a
       JOIN runs r ON r.id = a.run_id
       LEFT JOIN repositories rp ON rp.full_name = r.repo
      CROSS JOIN LATERAL (VALUES ($2::text || rp.installation_id), ($3::text || r.repo)) AS s(scope)
      WHERE a.id = $1 AND s.scope IS NOT NULL
      ORDER BY s.scope
     ON CONFLICT (scope, month) DO UPDATE
       SET cost_usd = usage_counters.cost_usd + EXCLUDED.cost_usd, minutes = usage_counters.minutes + EXCLUDED.minutes`,
    [attemptId, INSTALLATION_SCOPE_PREFIX, REPO_SCOPE_PREFIX],
  );
}
