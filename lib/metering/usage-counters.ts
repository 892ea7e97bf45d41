import type { Sql } from "../store/transaction";
import type { LoadedFacts } from "./admission-facts";
import { installationScope, repoScope } from "./scopes";

/**
 * Writes to the month's counters (`usage_counters`) and rate buckets, always inside the
 * transaction that makes the fact they count: a rolled-back open or Attempt counts nothing.
 */

/** An admitted open: one Run on the installation's and the repository's counters, one token from each limited bucket. */
export async function chargeOpen(sql: Sql, loaded: LoadedFacts): Promise<void> {
  await sql.query(
    `WITH c AS (UPDATE usage_counters SET runs = runs + 1 WHERE month = $1 AND scope = ANY($2) RETURNING 1),
          b AS (UPDATE rate_buckets rb SET tokens = v.tokens, refilled_at = now()
                  FROM unnest($3::text[], $4::float8[]) AS v(scope, tokens) WHERE rb.scope = v.scope RETURNING 1)
     SELECT (SELECT count(*) FROM c) AS counters, (SELECT count(*) FROM b) AS buckets`,
    [
      loaded.month,
      [loaded.scopes.installation, loaded.scopes.repository],
      loaded.buckets.map((b) => b.scope),
      loaded.buckets.map((b) => b.available - 1),
    ],
  );
}

/** The counters an open of `repo` in `installationId` counts on. */
export const openScopes = (installationId: number, repo: string): string[] => [installationScope(installationId), repoScope(repo)];
