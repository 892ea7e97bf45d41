import type { Db } from "../kernel/db";
import { IS_POLLED, REGISTERED_COLUMNS, type RegisteredRepository } from "../github/repository-rows";
import { query, rows, sql } from "../kernel/sql";

/** A polled repository with its adaptive poll interval (null: the shortest; ADR 0020). */
export type DueRepository = RegisteredRepository & { pollIntervalS: number | null };

/**
 * Takes the polled repositories due for a probe at `now` (never probed, or their next_poll_at
 * reached): each is made due again only at `until`, so an overlapping tick, here or on another
 * worker, does not poll it twice, and one whose poll died with its process comes back then.
 */
export async function takeDueRepositories(db: Db, now: Date, until: Date): Promise<DueRepository[]> {
  const due = await rows<DueRepository>(
    db.pool,
    sql`UPDATE repositories r SET next_poll_at = ${until}
       FROM (SELECT r.id FROM repositories r JOIN installations i ON i.id = r.installation_id
              WHERE ${IS_POLLED} AND (r.next_poll_at IS NULL OR r.next_poll_at <= ${now})
              FOR UPDATE OF r SKIP LOCKED) due
      WHERE r.id = due.id
  RETURNING ${REGISTERED_COLUMNS},
            r.poll_interval_s AS "pollIntervalS"`,
  );
  return due.sort((a, b) => a.installationId - b.installationId || (a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0));
}

/**
 * Writes the interval a probe chose and when the repository is due next; a quiet probe also
 * counts as the repository's last poll (`quietAt`: nothing changed, so what is stored is current).
 */
export async function scheduleNextPoll(db: Db, repo: string, intervalSeconds: number, now: number, quietAt: Date | null): Promise<void> {
  await query(
    db.pool,
    sql`UPDATE repositories SET poll_interval_s = ${intervalSeconds}, next_poll_at = ${new Date(now + intervalSeconds * 1000)},
            last_polled_at = COALESCE(${quietAt}, last_polled_at), poll_error = CASE WHEN ${quietAt}::timestamp IS NULL THEN poll_error END,
            poll_error_at = CASE WHEN ${quietAt}::timestamp IS NULL THEN poll_error_at END
      WHERE full_name = ${repo.toLowerCase()}`,
  );
}

/** A webhook about the repository: back to the shortest interval, due at the next tick. */
export async function pollSoon(db: Db, repo: string, now: number): Promise<void> {
  await query(
    db.pool,
    sql`UPDATE repositories SET poll_interval_s = NULL, next_poll_at = LEAST(next_poll_at, ${new Date(now)}) WHERE full_name = ${repo.toLowerCase()}`,
  );
}

/**
 * Redis lost its data (FLUSHALL, a new server): the webhooks received meanwhile may have lost
 * their Hints, so every repository is due at the next tick, each keeping its interval (a quiet
 * one goes back to it after that one probe). Returns how many repositories were made due.
 */
export async function pollEverySoon(db: Db, now: number): Promise<number> {
  const at = new Date(now);
  const { rowCount } = await query(db.pool, sql`UPDATE repositories SET next_poll_at = ${at} WHERE next_poll_at IS NOT NULL AND next_poll_at > ${at}`);
  return rowCount ?? 0;
}
