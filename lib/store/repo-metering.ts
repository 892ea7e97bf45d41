import { raw, sql, type Statement } from "./sql";
import { repoScopeSql } from "./usage-counters";

/**
 * What the store's hot statements (a claim, an Attempt's start) read of a repository's metering
 * within themselves; the gate's decisions are metering's (lib/metering/), these facts and the
 * default they depend on are the store's, so its statements import nothing above it.
 */

/**
 * The open rate of a repository whose own limit is 0 (not set): at most this many Runs open per
 * minute in one repository, whatever opens them (THREATS.md attack 12: one pull request's Runs
 * opening the next ones). A repository's own limit replaces it.
 */
export const DEFAULT_REPO_OPEN_RATE_PER_MINUTE = 30;

/** SQL: a repository's open rate from its quota column (an expression; NULL when it has no row). */
export const repoOpenRateSql = (column: string): string =>
  `(CASE WHEN COALESCE(${column}, 0) > 0 THEN ${column} ELSE ${DEFAULT_REPO_OPEN_RATE_PER_MINUTE} END)`;

/**
 * What a hot path (a claim, an Attempt's start) reads of a repository's metering within its own
 * statement; null when the repository is not registered (nothing is counted or refused).
 * `gated`: the gate has something to ask (a quota is set on the installation or the
 * repository, or the installation is suspended), so the caller asks it in a transaction.
 * Otherwise the only limit is the repository's default open rate, which the claim's own
 * statement takes a token of (takeDefaultRateTokenSql); an Attempt's start asks no rate.
 */
export interface RepoMetering {
  installationId: number;
  gated: boolean;
}

/** SQL: the RepoMetering (json) of the repository `repo` (an owner/name expression). */
export const repoMeteringSql = (repo: Statement): Statement => sql`
(SELECT json_build_object('installationId', rp.installation_id,
          'gated', i.suspended_at IS NOT NULL
                   OR EXISTS (SELECT 1 FROM quotas q WHERE q.installation_id = i.id)
                   OR EXISTS (SELECT 1 FROM quotas q WHERE q.repository_id = rp.id))
   FROM repositories rp JOIN installations i ON i.id = rp.installation_id
  WHERE rp.full_name = lower(${repo}))`;

/**
 * A Run the gate holds (it stays Pending, Queued or between Attempts) says why in
 * `runs.waiting_reason` as `quota:<token>`; the check run and the dashboard read it.
 */
export const QUOTA_WAITING_PREFIX = "quota:";

/**
 * SQL twin of metering's `refill` (lib/metering/rate-bucket.ts): the tokens of a bucket that
 * held `tokens` `elapsed` seconds ago, refilled at `perMinute` a minute up to `perMinute`.
 * test/store/rate-bucket-sql.test.ts holds the two to the same answers.
 */
export const refillSql = (tokens: Statement, elapsed: Statement, perMinute: Statement): Statement =>
  sql`LEAST(${perMinute}, ${tokens} + GREATEST(0, ${elapsed}) * ${perMinute} / 60.0)`;

/**
 * SQL (a data-modifying statement for a CTE): takes one token of the repository `repo`'s open
 * rate at the default rate, for each row `from` gives (a FROM item with its WHERE), as the gate's admitted open takes one (its
 * bucket created full when missing, refilled, capped at the rate); returns a row only when a
 * whole token was there (its scope). The claim's optimistic statement opens a Run of an ungated
 * repository only with it; a refused take opens nothing, and the gate, asked under the lock,
 * says why (rate_limited).
 */
export const takeDefaultRateTokenSql = (repo: Statement, from: Statement): Statement => {
  const rate = raw(String(DEFAULT_REPO_OPEN_RATE_PER_MINUTE));
  const available = refillSql(raw(`LEAST(rb.tokens, ${DEFAULT_REPO_OPEN_RATE_PER_MINUTE})`), raw("EXTRACT(EPOCH FROM now() - rb.refilled_at)"), rate);
  return sql`INSERT INTO rate_buckets AS rb (scope, tokens, refilled_at)
  SELECT ${repoScopeSql(repo)}, ${rate} - 1, now() FROM ${from}
  ON CONFLICT (scope) DO UPDATE SET tokens = ${available} - 1, refilled_at = now() WHERE ${available} >= 1
  RETURNING rb.scope`;
};
