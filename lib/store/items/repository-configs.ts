import type { StoredConfig } from "../../loops/stored-config";
import type { Db } from "../kernel/db";
import { storeConfigErrors } from "./loop-runtimes";
import { first, query, rows, sql } from "../kernel/sql";
import { transaction } from "../kernel/transaction";

/**
 * Stores a repository's config as read, with its file-level error (null: none) and its Loops'
 * errors, in one transaction.
 */
export async function writeRepositoryConfig(
  db: Db,
  repo: string,
  config: StoredConfig,
  fileError: string | null,
  loopErrors: readonly { loop: string; error: string; line: number | null }[],
): Promise<void> {
  await transaction(db, async (tx) => {
    await query(tx, sql`UPDATE repositories SET config = ${JSON.stringify(config)}, config_error = ${fileError}, updated_at = now() WHERE full_name = ${repo}`);
    await storeConfigErrors(tx, repo, loopErrors);
  });
}

/** The stored config of a repository, or null when it was never read. */
export async function storedConfig(db: Db, fullName: string): Promise<StoredConfig | null> {
  const row = await first<{ config: StoredConfig | null }>(db.pool, sql`SELECT config FROM repositories WHERE full_name = ${fullName.toLowerCase()}`);
  return row?.config ?? null;
}

/** The stored configs of these repositories (lower-cased owner/name), by name; a repository never read has none. */
export async function storedConfigsOf(db: Db, repos: readonly string[]): Promise<Map<string, StoredConfig | null>> {
  const found = await rows<{ full_name: string; config: StoredConfig | null }>(db.pool, sql`SELECT full_name, config FROM repositories WHERE full_name = ANY(${repos})`);
  return new Map(found.map((r) => [r.full_name, r.config]));
}

/** Makes the next poll of these repositories read their config again (a push changed it). */
export async function markConfigStale(db: Db, fullNames: readonly string[]): Promise<void> {
  if (fullNames.length === 0) return;
  await query(
    db.pool,
    sql`UPDATE repositories SET config = jsonb_set(config, '{readAt}', '"1970-01-01T00:00:00.000Z"') WHERE full_name = ANY(${fullNames.map((n) => n.toLowerCase())}::text[]) AND config IS NOT NULL`,
  );
}
