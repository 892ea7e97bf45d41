import { chargeOpenCounters } from "../store/usage-counters";
import type { Sql } from "../store/transaction";
import type { LoadedFacts } from "./admission-facts";
import { installationScope, repoScope } from "./scopes";

/**
 * Writes to the month's counters (`usage_counters`) and rate buckets, always inside the
 * transaction that makes the fact they count: a rolled-back open or Attempt counts nothing.
 */

/** An admitted open: one Run on the installation's and the repository's counters, one token from each limited bucket. */
export async function chargeOpen(sql: Sql, loaded: LoadedFacts): Promise<void> {
  await chargeOpenCounters(
    sql,
    loaded.month,
    [loaded.scopes.installation, loaded.scopes.repository],
    loaded.buckets.map((b) => ({ scope: b.scope, tokens: b.available - 1 })),
  );
}

/** The counters an open of `repo` in `installationId` counts on. */
export const openScopes = (installationId: number, repo: string): string[] => [installationScope(installationId), repoScope(repo)];
