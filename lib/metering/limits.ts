/** The limits of one installation or repository (`quotas`); 0 means unlimited. */
export interface Limits {
  monthlyRuns: number;
  monthlyCostUsd: number;
  maxConcurrent: number;
  openRatePerMinute: number;
}

export const UNLIMITED: Limits = Object.freeze({ monthlyRuns: 0, monthlyCostUsd: 0, maxConcurrent: 0, openRatePerMinute: 0 });

/** Whether a limit is set and `used` has reached it. */
export const reached = (limit: number, used: number): boolean => limit > 0 && used >= limit;

/** How near `used` is to `limit`, 0..1 (can pass 1); null when unlimited. */
export const nearness = (limit: number, used: number): number | null => (limit > 0 ? used / limit : null);
