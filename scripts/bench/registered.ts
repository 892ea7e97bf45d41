import type pg from "pg";
import { itemKey } from "../../lib/engine/ids";

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

/**
 * Stores `items` (open issues) as a poll stores an Item before it claims it: the product's claims
 * and outcomes then keep each Item's current Run (the current-Run triggers) as they do in the
 * product, where the unmetered rounds' Items have no row and the triggers only look them up.
 */
export async function storeItems(pool: pg.Pool, items: readonly { repo: string; number: number }[]): Promise<void> {
  await pool.query(
    `INSERT INTO items (key, repo, number, kind, state, title, labels, projection, content_hash)
     SELECT u.key, u.repo, u.n, 'issue', 'open', 'Item ' || u.n, ARRAY[]::text[], '{}', md5(u.key)
       FROM unnest($1::text[], $2::text[], $3::int[]) AS u(key, repo, n)
     ON CONFLICT (key) DO NOTHING`,
    [items.map((i) => itemKey(i.repo, i.number)), items.map((i) => i.repo), items.map((i) => i.number)],
  );
}
