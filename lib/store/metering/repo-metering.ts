import { sql, type Statement } from "../kernel/sql";

/**
 * What the store reads of a repository's metering beside a Run (readRunSnapshot); the gate's
 * decisions are metering's (lib/metering/), these facts and the default they depend on are the
 * store's, so its statements import nothing above it.
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
 * What an Attempt's start reads of a repository's metering with the Run; null when the
 * repository is not registered (nothing is counted or refused). `gated`: the gate has something
 * to ask of a start (a quota is set on the installation or the repository, or the installation
 * is suspended); otherwise the start asks it nothing.
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
