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

/**
 * The account id of the live installation on the account `login` (any case), as GitHub last gave
 * it; null when none, or when two live installations claim that login (one renamed since and not
 * reconciled yet): then the login names no account for now.
 */
export async function installationAccountId(db: Db, login: string): Promise<string | null> {
  const found = await rows<{ account_id: string }>(
    db.pool,
    sql`SELECT DISTINCT account_id::text AS account_id FROM installations
         WHERE lower(account_login) = ${login.toLowerCase()} AND deleted_at IS NULL AND account_id IS NOT NULL`,
  );
  return found.length === 1 ? found[0]!.account_id : null;
}

/** The GitHub id of the repository Atelier holds under `fullName` (any case); null when none holds it. */
export async function repositoryIdHolding(db: Db, fullName: string): Promise<string | null> {
  const row = await first<{ id: string }>(db.pool, sql`SELECT id::text AS id FROM repositories WHERE full_name = ${fullName.toLowerCase()} AND retired_at IS NULL`);
  return row?.id ?? null;
}

/** A registered repository as the roster's `allow:` judges it (ADR 0091): its id and its owner's account id (null until known). */
export interface RepositoryIdentity {
  fullName: string;
  id: string;
  ownerId: string | null;
}

/** The identities of the repositories Atelier holds under `names` (owner/name, or a retired one's `owner/name#id`); a name it does not hold is left out. */
export function repositoryIdentities(db: Db, names: readonly string[]): Promise<RepositoryIdentity[]> {
  return rows<RepositoryIdentity>(
    db.pool,
    sql`SELECT r.full_name AS "fullName", r.id::text AS id, i.account_id::text AS "ownerId"
          FROM repositories r JOIN installations i ON i.id = r.installation_id
         WHERE r.full_name = ANY(${names.map((n) => n.toLowerCase())})`,
  );
}
