import { INSTALLATION_SCOPE_PREFIX, REPO_SCOPE_PREFIX } from "../store/usage-counters";

/**
 * The keys metering counts under (usage_counters.scope, rate_buckets.scope): one per
 * installation and one per repository (owner/name, lower-cased).
 */
export const installationScope = (installationId: number): string => `${INSTALLATION_SCOPE_PREFIX}${installationId}`;
export const repoScope = (repo: string): string => `${REPO_SCOPE_PREFIX}${repo.toLowerCase()}`;
