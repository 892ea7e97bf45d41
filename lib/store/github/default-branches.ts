import type { Db } from "../kernel/db";
import { first, sql } from "../kernel/sql";

/** The default branch of a registered repository (owner/name, any case); undefined when it is not registered. */
export async function repositoryDefaultBranch(db: Db, repo: string): Promise<string | undefined> {
  return (await first<{ default_branch: string }>(db.pool, sql`SELECT default_branch FROM repositories WHERE full_name = ${repo.toLowerCase()}`))
    ?.default_branch;
}
