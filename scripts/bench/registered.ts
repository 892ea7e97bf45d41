import type pg from "pg";

/**
 * Registers `count` repositories `bench/<prefix>-<n>` (n from 0) of one installation, with no
 * quota, as the product's metered path sees them; each bench that meters passes its own
 * installation id and prefix, since one `npm run bench` shares its database across benches.
 * Returns the repository of the n-th Item (n modulo `count`).
 */
export async function registerRepositories(pool: pg.Pool, installationId: number, prefix: string, count: number): Promise<(n: number) => string> {
  await pool.query(`INSERT INTO installations (id, account_login, updated_at) VALUES ($1, 'bench', now()) ON CONFLICT (id) DO NOTHING`, [installationId]);
  await pool.query(
    `INSERT INTO repositories (id, installation_id, full_name, updated_at)
     SELECT $1::bigint * 100000 + n, $1, 'bench/' || $2 || '-' || n, now() FROM generate_series(0, $3::int - 1) AS n`,
    [installationId, prefix, count],
  );
  return (n) => `bench/${prefix}-${n % count}`;
}
