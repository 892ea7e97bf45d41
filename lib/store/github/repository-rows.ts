import type { Db } from "../kernel/db";
import { first, query, raw, rows, sql } from "../kernel/sql";
import type { Sql } from "../kernel/transaction";

/** A repository as an installation webhook or GET /installation/repositories gives it. */
export interface RepositoryInput {
  id: number;
  full_name: string;
  private?: boolean;
  default_branch?: string;
}

/** A registered repository Atelier polls. */
export interface RegisteredRepository {
  id: number;
  installationId: number;
  fullName: string;
  defaultBranch: string;
  private: boolean;
}

/**
 * Whether a repository is polled: still in its installation, which is neither deleted nor
 * suspended. (The one place that question is answered.)
 */
export const IS_POLLED = raw(`r.removed_at IS NULL AND i.deleted_at IS NULL AND i.suspended_at IS NULL`);

/** The columns of a RegisteredRepository, of `repositories r`. */
export const REGISTERED_COLUMNS = raw(`r.id, r.installation_id AS "installationId", r.full_name AS "fullName", r.default_branch AS "defaultBranch", r.private`);

/**
 * SQL: retires repositories (ADR 0070): each is named `<owner/name>#<id>`, which no repository on
 * GitHub can be named, and its rows follow that name (the repositories_move_rows trigger); the
 * workers collect its caches. Registering its id again brings it, and its rows, back.
 */
const RETIRE = raw(`UPDATE repositories SET full_name = split_part(full_name, '#', 1) || '#' || id::text,
       removed_at = COALESCE(removed_at, now()), retired_at = COALESCE(retired_at, now()), updated_at = now()`);

/** Retires the repository of GitHub id `id` (deleted on GitHub); returns its name before, or null when it was not registered or retired already. */
export async function retireRepository(tx: Sql, id: number): Promise<string | null> {
  const row = await first<{ full_name: string }>(tx, sql`${RETIRE} WHERE id = ${id} AND retired_at IS NULL RETURNING split_part(full_name, '#', 1) AS full_name`);
  return row?.full_name ?? null;
}

/** Of the repository ids `ids`, those retired (their caches are collected). */
export async function retiredRepositoryIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await rows<{ id: string }>(db.pool, sql`SELECT id::text AS id FROM repositories WHERE id = ANY(${ids}::bigint[]) AND retired_at IS NOT NULL`);
  return new Set(found.map((r) => r.id));
}

/** Registers repositories (again); returns the ones that were not registered before. */
export async function registerRepositories(tx: Sql, installationId: number, repos: readonly RepositoryInput[]): Promise<string[]> {
  const registered: string[] = [];
  for (const repo of repos) {
    const fullName = repo.full_name.toLowerCase();
    // another repository holds the name no more on GitHub (deleted, renamed, transferred): retire it,
    // so that none of its rows is found under the name of this one
    await query(tx, sql`${RETIRE} WHERE full_name = ${fullName} AND id <> ${repo.id}`);
    const row = await first<{ fresh: boolean }>(
      tx,
      sql`INSERT INTO repositories (id, installation_id, full_name, private, default_branch, updated_at)
       VALUES (${repo.id}, ${installationId}, ${fullName}, ${repo.private ?? false}, ${repo.default_branch ?? "main"}, now())
       ON CONFLICT (id) DO UPDATE SET installation_id = EXCLUDED.installation_id, full_name = EXCLUDED.full_name,
         private = EXCLUDED.private,
         default_branch = CASE WHEN ${repo.default_branch !== undefined} THEN EXCLUDED.default_branch ELSE repositories.default_branch END,
         removed_at = NULL, retired_at = NULL, updated_at = now()
       RETURNING (xmax = 0) OR (SELECT removed_at IS NOT NULL FROM repositories r WHERE r.id = ${repo.id}) AS fresh`,
    );
    if (row?.fresh) registered.push(fullName);
  }
  return registered;
}

/** Marks the installation's repositories of `ids` removed; returns those that were registered. */
export async function removeRepositories(tx: Sql, installationId: number, ids: readonly number[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const removed = await rows<{ full_name: string }>(
    tx,
    sql`UPDATE repositories SET removed_at = now(), updated_at = now()
      WHERE installation_id = ${installationId} AND id = ANY(${ids}::bigint[]) AND removed_at IS NULL RETURNING full_name`,
  );
  return removed.map((r) => r.full_name);
}

/** Marks the installation's repositories removed but those of `keep`; returns those that were registered. */
export async function removeRepositoriesExcept(tx: Sql, installationId: number, keep: readonly number[]): Promise<string[]> {
  const removed = await rows<{ full_name: string }>(
    tx,
    sql`UPDATE repositories SET removed_at = now(), updated_at = now()
      WHERE installation_id = ${installationId} AND NOT (id = ANY(${keep}::bigint[])) AND removed_at IS NULL RETURNING full_name`,
  );
  return removed.map((r) => r.full_name);
}

/** Every repository Atelier polls now. */
export async function polledRepositories(db: Db): Promise<RegisteredRepository[]> {
  return rows<RegisteredRepository>(
    db.pool,
    sql`SELECT ${REGISTERED_COLUMNS}
       FROM repositories r JOIN installations i ON i.id = r.installation_id
      WHERE ${IS_POLLED} ORDER BY r.full_name`,
  );
}

/** One repository if Atelier polls it, else null. */
export async function polledRepository(db: Db, fullName: string): Promise<RegisteredRepository | null> {
  const row = await first<RegisteredRepository>(
    db.pool,
    sql`SELECT ${REGISTERED_COLUMNS}
       FROM repositories r JOIN installations i ON i.id = r.installation_id
      WHERE r.full_name = ${fullName.toLowerCase()} AND ${IS_POLLED}`,
  );
  return row ?? null;
}

/** The registered repositories of an installation (owner/name, lower-cased): a Loop's tenant. */
export async function installationRepositories(db: Db, installationId: number): Promise<string[]> {
  const found = await rows<{ full_name: string }>(
    db.pool,
    sql`SELECT full_name FROM repositories WHERE installation_id = ${installationId} AND removed_at IS NULL ORDER BY full_name`,
  );
  return found.map((r) => r.full_name);
}

/** The registered repositories of an owner (lower-cased login). */
export async function repositoriesOfOwner(db: Db, owner: string): Promise<string[]> {
  const found = await rows<{ full_name: string }>(
    db.pool,
    sql`SELECT full_name FROM repositories WHERE full_name LIKE ${`${owner.replace(/[%_\\]/g, "\\$&")}/%`} AND removed_at IS NULL`,
  );
  return found.map((r) => r.full_name);
}
