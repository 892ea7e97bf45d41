import { literal, query, raw, sql, type Statement } from "../kernel/sql";
import type { Sql } from "../kernel/transaction";

/**
 * The SQL of the month's counters (`usage_counters`) that the store's own statements embed:
 * an open counted by the statement that opens it, the usage of Attempts by the statement that
 * closes them. Metering reads the same rows (admission-facts.ts) and charges them (chargeOpenCounters).
 * A repository's row is the only one written: an installation's month is the sum of its
 * repositories' rows (installationUsageSql), so no row is shared by every open and every
 * outcome of an installation (ADR 0029).
 */

/** The keys the rate buckets count under: one per installation, one per repository (owner/name, lower-cased); the counters, per repository. */
export const INSTALLATION_SCOPE_PREFIX = "installation:";
export const REPO_SCOPE_PREFIX = "repo:";

/** SQL: the key (`YYYY-MM`) of the database clock's current UTC month, the same as metering's monthKey(now). */
const MONTH_OF_NOW = raw(`to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM')`);

/** SQL: the repository's counter and bucket key (metering's repoScope), of an owner/name expression. */
export const repoScopeSql = (repo: Statement): Statement => sql`${literal(REPO_SCOPE_PREFIX)} || lower(${repo})`;

/**
 * SQL: the cost and minutes of finished Attempts onto the month's counters of their
 * repositories (the cost caps read them). `usage` names the rows to count (repo, cost_usd,
 * duration_ms), drawn from the RETURNING of the update that closes the Attempts (an outcome,
 * the sweep, a cancel), which matches an open Attempt once, so each counts once.
 */
export const addUsageSql = (usage: Statement): Statement => sql`
INSERT INTO usage_counters (scope, month, runs, cost_usd, minutes)
SELECT ${repoScopeSql(raw("u.repo"))}, ${MONTH_OF_NOW}, 0, COALESCE(u.cost_usd, 0), COALESCE(u.duration_ms, 0) / 60000.0
  FROM ${usage} u
 ORDER BY 1
ON CONFLICT (scope, month) DO UPDATE
  SET cost_usd = usage_counters.cost_usd + EXCLUDED.cost_usd, minutes = usage_counters.minutes + EXCLUDED.minutes`;

/** addUsageSql of the Attempts a statement closed (`closed` returns their run_id, cost_usd, duration_ms). */
export const addAttemptUsageSql = (closed: string): Statement =>
  addUsageSql(raw(`(SELECT r.repo, c.cost_usd, c.duration_ms FROM ${closed} c JOIN runs r ON r.id = c.run_id)`));

/**
 * SQL: the month `month`'s usage of the installation `installationId`, the sum of its
 * repositories' counters (removed repositories included: what they used this month counts):
 * one row, runs and cost (float8), 0 for none.
 */
export const installationUsageSql = (installationId: Statement, month: Statement): Statement => sql`
SELECT COALESCE(sum(c.runs), 0)::int AS runs, COALESCE(sum(c.cost_usd), 0)::float8 AS cost
  FROM repositories rp
  JOIN usage_counters c ON c.scope = ${repoScopeSql(raw("rp.full_name"))} AND c.month = ${month}
 WHERE rp.installation_id = ${installationId}`;

/**
 * An admitted open the gate asked (chargeOpen, lib/metering/usage-counters.ts), in its
 * transaction: one Run on the repository's counter `scope` (created and locked by the gate's
 * read), and the rate buckets set to what is left of them.
 */
export async function chargeOpenCounters(
  tx: Sql,
  month: string,
  scope: string,
  buckets: readonly { scope: string; tokens: number }[],
): Promise<void> {
  await query(
    tx,
    sql`WITH c AS (UPDATE usage_counters SET runs = runs + 1 WHERE month = ${month} AND scope = ${scope} RETURNING 1),
             b AS (UPDATE rate_buckets rb SET tokens = v.tokens, refilled_at = now()
                     FROM unnest(${buckets.map((b) => b.scope)}::text[], ${buckets.map((b) => b.tokens)}::float8[]) AS v(scope, tokens)
                    WHERE rb.scope = v.scope RETURNING 1)
        SELECT (SELECT count(*) FROM c) AS counters, (SELECT count(*) FROM b) AS buckets`,
  );
}
