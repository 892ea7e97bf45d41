import type { Db } from "../kernel/db";
import { first, query, rows, sql } from "../kernel/sql";

/**
 * What metering and the outbound hooks ask of the registered installations and repositories:
 * whether a quota's or a hook's owner exists, which installation a repository belongs to.
 */

/** Whether an installation is registered (deleted ones included). */
export async function isInstallationRegistered(db: Db, installationId: number): Promise<boolean> {
  return ((await query(db.pool, sql`SELECT 1 FROM installations WHERE id = ${installationId}`)).rowCount ?? 0) > 0;
}

/** A registered repository's id and installation, by owner/name (any case); undefined when it is not registered. */
export function registeredRepository(db: Db, repo: string): Promise<{ id: number; installation_id: number } | undefined> {
  return first<{ id: number; installation_id: number }>(
    db.pool,
    sql`SELECT id, installation_id FROM repositories WHERE full_name = ${repo.toLowerCase()}`,
  );
}

/** Whether Atelier holds the repository of GitHub id `id` under `fullName` (any case), and no other under that name. */
export async function holdsRepositoryAs(db: Db, id: number, fullName: string): Promise<boolean> {
  const found = await rows<{ id: string; full_name: string }>(
    db.pool,
    sql`SELECT id::text AS id, full_name FROM repositories WHERE id = ${id} OR full_name = ${fullName.toLowerCase()}`,
  );
  return found.length === 1 && found[0]!.id === String(id) && found[0]!.full_name === fullName.toLowerCase();
}

/** The installation of each of the registered repositories among `repos` (lower-cased owner/name). */
export function installationsOfRepositories(db: Db, repos: readonly string[]): Promise<{ full_name: string; installation_id: number }[]> {
  return rows<{ full_name: string; installation_id: number }>(
    db.pool,
    sql`SELECT full_name, installation_id FROM repositories WHERE full_name = ANY(${repos})`,
  );
}

/** The installations not deleted, by account login (where an admin may add a hook). */
export function liveInstallations(db: Db): Promise<{ id: number; account: string }[]> {
  return rows<{ id: number; account: string }>(
    db.pool,
    sql`SELECT id, account_login AS account FROM installations WHERE deleted_at IS NULL ORDER BY account_login`,
  );
}
