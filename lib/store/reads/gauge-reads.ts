import type { Db } from "../kernel/db";
import { rows, sql } from "../kernel/sql";

/** What the scrape-time gauges read (lib/health/gauges.ts): each one grouped statement. */

export interface RunStateCount {
  state: string;
  n: number;
  /** when the oldest Run in the state was received */
  oldest: Date | null;
}

/** The Runs in each state that has any (BENCH metrics_scrape_ms at 10,000 Runs). */
export async function countRunsByState(db: Db): Promise<RunStateCount[]> {
  return rows<RunStateCount>(db.pool, sql`SELECT state::text AS state, count(*)::int AS n, min(received_at) AS oldest FROM runs GROUP BY state`);
}

/** Per installation, seconds since its least recently polled repository was polled (or registered). */
export async function pollLagByInstallation(db: Db): Promise<{ installation_id: number; lag: number }[]> {
  return rows(
    db.pool,
    sql`SELECT installation_id, extract(epoch FROM now() - min(COALESCE(last_polled_at, created_at)))::float8 AS lag
           FROM repositories WHERE removed_at IS NULL GROUP BY installation_id`,
  );
}
