import type { Db } from "./db";
import { first, sql } from "./sql";

/** What the branches of a Run's work are read from: its repository's default branch, its Event's submission. */

/** The default branch of a registered repository (owner/name, any case); undefined when it is not registered. */
export async function repositoryDefaultBranch(db: Db, repo: string): Promise<string | undefined> {
  return (await first<{ default_branch: string }>(db.pool, sql`SELECT default_branch FROM repositories WHERE full_name = ${repo.toLowerCase()}`))
    ?.default_branch;
}

/** The App's pull request branch an Event continues (`submission.branch`, ADR 0019); null when it names none. */
export async function submittedBranchOf(db: Db, eventId: string): Promise<string | null> {
  return (await first<{ branch: string | null }>(db.pool, sql`SELECT submission->>'branch' AS branch FROM events WHERE id = ${eventId}`))?.branch ?? null;
}
