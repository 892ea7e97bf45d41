import type { Sql } from "../store/transaction";
import type { LoadedFacts } from "./admission-facts";
import { MONTH_OF_NOW_SQL } from "./month";
import { INSTALLATION_SCOPE_PREFIX, installationScope, REPO_SCOPE_PREFIX, repoScope } from "./scopes";

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
 * SQL: one more Run opened this month on the counters `scopes` names (a text[] expression),
 * created when missing. For an open the gate had nothing to ask of (no quota set, nothing
 * suspended), charged by the statement that opens it; chargeOpen charges the others.
 */
export const countOpenSql = (scopes: string): string => `
INSERT INTO usage_counters (scope, month, runs)
SELECT s, ${MONTH_OF_NOW_SQL}, 1 FROM unnest(${scopes}::text[]) AS s ORDER BY s
ON CONFLICT (scope, month) DO UPDATE SET runs = usage_counters.runs + 1`;

/** The counters an open of `repo` in `installationId` counts on. */
export const openScopes = (installationId: number, repo: string): string[] => [installationScope(installationId), repoScope(repo)];

/** SQL: openScopes, of an installation id and an owner/name expression (a null id gives a null scope). */
export const openScopesSql = (installationId: string, repo: string): string =>
  `ARRAY['${INSTALLATION_SCOPE_PREFIX}' || ${installationId}, '${REPO_SCOPE_PREFIX}' || lower(${repo})]`;

/**
 * SQL: the cost and minutes of finished Attempts onto the month's counters of their
 * installation and repository (the cost cap reads them). `usage` names the rows to count
 * (repo, cost_usd, duration_ms), drawn from the RETURNING of the update that closes the
 * Attempts (an outcome, the sweep, a cancel), which matches an open Attempt once, so each
 * counts once.
 */
export const addUsageSql = (usage: string): string => `
INSERT INTO usage_counters (scope, month, runs, cost_usd, minutes)
SELECT s.scope, ${MONTH_OF_NOW_SQL}, 0, COALESCE(u.cost_usd, 0), COALESCE(u.duration_ms, 0) / 60000.0
  FROM ${usage} u
  LEFT JOIN repositories rp ON rp.full_name = lower(u.repo)
 CROSS JOIN LATERAL unnest(${openScopesSql("rp.installation_id", "u.repo")}) AS s(scope)
 WHERE s.scope IS NOT NULL
 ORDER BY s.scope
ON CONFLICT (scope, month) DO UPDATE
  SET cost_usd = usage_counters.cost_usd + EXCLUDED.cost_usd, minutes = usage_counters.minutes + EXCLUDED.minutes`;

/** addUsageSql of the Attempts a statement closed (`closed` returns their run_id, cost_usd, duration_ms). */
export const addAttemptUsageSql = (closed: string): string =>
  addUsageSql(`(SELECT r.repo, c.cost_usd, c.duration_ms FROM ${closed} c JOIN runs r ON r.id = c.run_id)`);
