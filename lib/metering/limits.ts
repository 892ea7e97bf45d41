import { DEFAULT_REPO_OPEN_RATE_PER_MINUTE } from "../store/repo-metering";

/** The limits of one installation or repository (`quotas`); 0 means unlimited. */
export interface Limits {
  monthlyRuns: number;
  monthlyCostUsd: number;
  maxConcurrent: number;
  openRatePerMinute: number;
}

export const UNLIMITED: Limits = Object.freeze({ monthlyRuns: 0, monthlyCostUsd: 0, maxConcurrent: 0, openRatePerMinute: 0 });


/** SQL: a repository's open rate from its quota column (an expression; NULL when it has no row). */
export const repoOpenRateSql = (column: string): string =>
  `(CASE WHEN COALESCE(${column}, 0) > 0 THEN ${column} ELSE ${DEFAULT_REPO_OPEN_RATE_PER_MINUTE} END)`;

/** Whether a limit is set and `used` has reached it. */
export const reached = (limit: number, used: number): boolean => limit > 0 && used >= limit;

/** How near `used` is to `limit`, 0..1 (can pass 1); null when unlimited. */
export const nearness = (limit: number, used: number): number | null => (limit > 0 ? used / limit : null);
