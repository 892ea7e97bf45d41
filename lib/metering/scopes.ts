import { INSTALLATION_SCOPE_PREFIX, REPO_SCOPE_PREFIX } from "../store/metering/usage-counter-sql";

/**
 * The keys metering counts under: the rate buckets (rate_buckets.scope), one per installation
 * and one per repository (owner/name, lower-cased); the month's counters (usage_counters.scope),
 * one per repository, an installation's month being the sum of its repositories'.
 */
export const installationScope = (installationId: number): string => `${INSTALLATION_SCOPE_PREFIX}${installationId}`;
export const repoScope = (repo: string): string => `${REPO_SCOPE_PREFIX}${repo.toLowerCase()}`;
