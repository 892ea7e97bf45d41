import { numericIdParam, repoParam } from "../http/url-ids";
import { z } from "zod";
import { NotFoundError } from "../errors";
import type { Db } from "../store/kernel/db";
import { quotaOf, setQuotaLimits, type QuotaKey } from "../store/metering/quotas";
import { isInstallationRegistered, registeredRepository } from "../store/github/registrations";
import { UNLIMITED, type Limits } from "./limits";

/**
 * The limits an admin sets, per installation or per repository (`quotas`); 0 = unlimited.
 * Reads and writes go through here; the routes only parse and authorize.
 */

export type QuotaOwner = { kind: "installation"; installationId: number } | { kind: "repository"; repo: string };

/** The owner named by a route's parameters: an installation id, or a repository's owner and name. */
export function quotaOwnerOf(params: { id: string } | { owner: string; name: string }): QuotaOwner {
  if ("id" in params) {
    return { kind: "installation", installationId: numericIdParam(params.id, "installation") };
  }
  return { kind: "repository", repo: repoParam(params.owner, params.name) };
}

export interface QuotaSetting {
  owner: QuotaOwner;
  limits: Limits;
}

/** The body of PUT /api/v1/quotas/…: any subset of the four limits. */
export const quotaInput = z.strictObject({
  monthly_runs: z.number().int("monthly_runs is a whole number of Runs").min(0, "monthly_runs cannot be negative").max(10_000_000).optional(),
  monthly_cost_usd: z
    .number()
    .min(0, "monthly_cost_usd cannot be negative")
    .max(1_000_000_000, "monthly_cost_usd is at most 1,000,000,000")
    .multipleOf(0.01, "monthly_cost_usd has at most two decimals (cents)")
    .optional(),
  max_concurrent: z.number().int("max_concurrent is a whole number of Runs").min(0, "max_concurrent cannot be negative").max(100_000).optional(),
  open_rate_per_minute: z.number().int("open_rate_per_minute is a whole number").min(0, "open_rate_per_minute cannot be negative").max(100_000).optional(),
});
export type QuotaInput = z.infer<typeof quotaInput>;

/** The owner's key; NotFoundError when the installation or repository is not registered. */
async function ownerKey(db: Db, owner: QuotaOwner): Promise<QuotaKey> {
  if (owner.kind === "installation") {
    if (!(await isInstallationRegistered(db, owner.installationId))) {
      throw new NotFoundError("installation_not_found", `No installation ${owner.installationId} is registered.`);
    }
    return { installationId: owner.installationId };
  }
  const registered = await registeredRepository(db, owner.repo);
  if (!registered) throw new NotFoundError("repository_not_found", `The repository ${owner.repo} is not registered with Atelier.`);
  return { repositoryId: registered.id };
}

export async function getQuota(db: Db, owner: QuotaOwner): Promise<QuotaSetting> {
  return { owner, limits: (await quotaOf(db, await ownerKey(db, owner))) ?? { ...UNLIMITED } };
}

/** Sets the given limits (the others keep their value); returns the whole setting. */
export async function setQuota(db: Db, owner: QuotaOwner, input: QuotaInput): Promise<QuotaSetting> {
  const key = await ownerKey(db, owner);
  return {
    owner,
    limits: await setQuotaLimits(db, key, {
      monthlyRuns: input.monthly_runs,
      monthlyCostUsd: input.monthly_cost_usd,
      maxConcurrent: input.max_concurrent,
      openRatePerMinute: input.open_rate_per_minute,
    }),
  };
}

/** The limits as the API shows them (snake_case, like the body it accepts). */
export function limitsJson(l: Limits): Required<QuotaInput> {
  return {
    monthly_runs: l.monthlyRuns,
    monthly_cost_usd: l.monthlyCostUsd,
    max_concurrent: l.maxConcurrent,
    open_rate_per_minute: l.openRatePerMinute,
  };
}
