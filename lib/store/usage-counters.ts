import { literal, query, raw, sql, type Statement } from "./sql";
import type { Sql } from "./transaction";

/**
 * The SQL of the month's counters (`usage_counters`) that the store's own statements embed:
 * an open counted by the statement that opens it, the usage of Attempts by the statement that
 * closes them. Metering reads the same rows (admission-facts.ts) and charges them (chargeOpenCounters).
 */

/** The keys the counters and rate buckets count under: one per installation, one per repository (owner/name, lower-cased). */
export const INSTALLATION_SCOPE_PREFIX = "installation:";
export const REPO_SCOPE_PREFIX = "repo:";

/** SQL: the key (`YYYY-MM`) of the database clock's current UTC month, the same as metering's monthKey(now). */
const MONTH_OF_NOW = raw(`to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM')`);

/**
 * SQL: one more Run opened this month on the counters `scopes` names (a text[] expression),
 * created when missing. For an open the gate had nothing to ask of (no quota set, nothing
 * suspended), charged by the statement that opens it; chargeOpen charges the others.
 */
export const countOpenSql = (scopes: Statement): Statement => sql`
INSERT INTO usage_counters (scope, month, runs)
SELECT s, ${MONTH_OF_NOW}, 1 FROM unnest(${scopes}::text[]) AS s ORDER BY s
ON CONFLICT (scope, month) DO UPDATE SET runs = usage_counters.runs + 1`;

/** SQL: the counters an open counts on (metering's openScopes), of an installation id and an owner/name expression (a null id gives a null scope). */
export const openScopesSql = (installationId: Statement, repo: Statement): Statement =>
  sql`ARRAY[${literal(INSTALLATION_SCOPE_PREFIX)} || ${installationId}, ${repoScopeSql(repo)}]`;

/** SQL: the repository's counter and bucket key (metering's repoScope), of an owner/name expression. */
export const repoScopeSql = (repo: Statement): Statement => sql`${literal(REPO_SCOPE_PREFIX)} || lower(${repo})`;

/**
 * SQL: the cost and minutes of finished Attempts onto the month's counters of their
 * installation and repository (the cost cap reads them). `usage` names the rows to count
 * (repo, cost_usd, duration_ms), drawn from the RETURNING of the update that closes the
 * Attempts (an outcome, the sweep, a cancel), which matches an open Attempt once, so each
 * counts once.
 */
export const addUsageSql = (usage: Statement): Statement => sql`
INSERT INTO usage_counters (scope, month, runs, cost_usd, minutes)
SELECT s.scope, ${MONTH_OF_NOW}, 0, COALESCE(u.cost_usd, 0), COALESCE(u.duration_ms, 0) / 60000.0
  FROM ${usage} u
  LEFT JOIN repositories rp ON rp.full_name = lower(u.repo)
 CROSS JOIN LATERAL unnest(${openScopesSql(raw("rp.installation_id"), raw("u.repo"))}) AS s(scope)
 WHERE s.scope IS NOT NULL
 ORDER BY s.scope
ON CONFLICT (scope, month) DO UPDATE
  SET cost_usd = usage_counters.cost_usd + EXCLUDED.cost_usd, minutes = usage_counters.minutes + EXCLUDED.minutes`;

/** addUsageSql of the Attempts a statement closed (`closed` returns their run_id, cost_usd, duration_ms). */
export const addAttemptUsageSql = (closed: string): Statement =>
  addUsageSql(raw(`(SELECT r.repo, c.cost_usd, c.duration_ms FROM ${closed} c JOIN runs r ON r.id = c.run_id)`));

/**
 * An admitted open the gate asked (chargeOpen, lib/metering/usage-counters.ts), in its
 * transaction: one Run on the month's counters `scopes` (created and locked by the gate's read),
 * and the rate buckets set to what is left of them.
 */
export async function chargeOpenCounters(
  tx: Sql,
  month: string,
  scopes: readonly string[],
  buckets: readonly { scope: string; tokens: number }[],
): Promise<void> {
  await query(
    tx,
    sql`WITH c AS (UPDATE usage_counters SET runs = runs + 1 WHERE month = ${month} AND scope = ANY(${scopes}) RETURNING 1),
             b AS (UPDATE rate_buckets rb SET tokens = v.tokens, refilled_at = now()
                     FROM unnest(${buckets.map((b) => b.scope)}::text[], ${buckets.map((b) => b.tokens)}::float8[]) AS v(scope, tokens)
                    WHERE rb.scope = v.scope RETURNING 1)
        SELECT (SELECT count(*) FROM c) AS counters, (SELECT count(*) FROM b) AS buckets`,
  );
}
