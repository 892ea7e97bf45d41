/** The limits of one installation or repository (`quotas`); 0 means unlimited. */
export interface Limits {
  monthlyRuns: number;
  monthlyCostUsd: number;
  maxConcurrent: number;
  openRatePerMinute: number;
}

export const UNLIMITED: Limits = Object.freeze({ monthlyRuns: 0, monthlyCostUsd: 0, maxConcurrent: 0, openRatePerMinute: 0 });

/**
 * A concurrency cap lowered by the reserve held for other workloads (the instance's
 * concurrency_reserve): a set cap of N lets N − reserve run, never fewer than one; an unset cap
 * (0, unlimited) stays unset.
 */
export const lowerByReserve = (cap: number, reserve: number): number => (cap > 0 ? Math.max(1, cap - reserve) : 0);

/** Whether a limit is set and `used` has reached it. */
export const reached = (limit: number, used: number): boolean => limit > 0 && used >= limit;

/** How near `used` is to `limit`, 0..1 (can pass 1); null when unlimited. */
export const nearness = (limit: number, used: number): number | null => (limit > 0 ? used / limit : null);
