import { chargeOpenCounters } from "../store/metering/usage-counter-sql";
import type { Sql } from "../store/kernel/transaction";
import type { LoadedFacts } from "./admission-facts";

/**
 * Writes to the month's counters (`usage_counters`) and rate buckets, always inside the
 * transaction that makes the fact they count: a rolled-back open or Attempt counts nothing.
 */

/**
 * An admitted open: one Run on the repository's counter (its installation's month is the sum of
 * its repositories'), one token from each limited bucket.
 */
export async function chargeOpen(sql: Sql, loaded: LoadedFacts): Promise<void> {
  await chargeOpenCounters(
    sql,
    loaded.month,
    loaded.scopes.repository,
    loaded.buckets.map((b) => ({ scope: b.scope, tokens: b.available - 1 })),
  );
}
