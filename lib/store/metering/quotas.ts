import type { Db } from "../kernel/db";
import type { Quota } from "../generated/client";

/**
 * The limits an admin sets per installation or per repository (`quotas`, one row per owner);
 * 0 = unlimited. The gate reads them within its own statements (admission-facts.ts).
 */
export interface QuotaLimits {
  monthlyRuns: number;
  monthlyCostUsd: number;
  maxConcurrent: number;
  openRatePerMinute: number;
}

/** Whose quota: an installation's (by id) or a repository's (by its id). */
export type QuotaKey = { installationId: number } | { repositoryId: number };

const limitsOf = (q: Pick<Quota, "monthlyRuns" | "monthlyCostUsd" | "maxConcurrent" | "openRatePerMinute">): QuotaLimits => ({
  monthlyRuns: q.monthlyRuns,
  monthlyCostUsd: q.monthlyCostUsd.toNumber(),
  maxConcurrent: q.maxConcurrent,
  openRatePerMinute: q.openRatePerMinute,
});

const LIMITS = { monthlyRuns: true, monthlyCostUsd: true, maxConcurrent: true, openRatePerMinute: true } as const;

/** The owner's limits; null when none are set. */
export async function quotaOf(db: Db, key: QuotaKey): Promise<QuotaLimits | null> {
  const quota = await db.prisma.quota.findUnique({ where: key, select: LIMITS });
  return quota && limitsOf(quota);
}

/**
 * Sets the limits given (undefined: the others keep their value, 0 on a new row), in one upsert
 * (INSERT … ON CONFLICT) on the owner's unique key; returns all four.
 */
export async function setQuotaLimits(db: Db, key: QuotaKey, given: Partial<QuotaLimits>): Promise<QuotaLimits> {
  const quota = await db.prisma.quota.upsert({
    where: key,
    create: {
      ...key,
      monthlyRuns: given.monthlyRuns ?? 0,
      monthlyCostUsd: given.monthlyCostUsd ?? 0,
      maxConcurrent: given.maxConcurrent ?? 0,
      openRatePerMinute: given.openRatePerMinute ?? 0,
    },
    // the key too, so an empty `given` is still one INSERT … ON CONFLICT (Prisma reads first for an empty update)
    update: { ...key, ...given },
    select: LIMITS,
  });
  return limitsOf(quota);
}
