import type { Db } from "../kernel/db";
import { first, query, sql } from "../kernel/sql";

/**
 * A repository's poll cursor: where the last completed cycle stopped. It is written only after
 * every Item of a cycle finished, so a failed cycle leaves it as it was.
 */
export interface PollCursor {
  /** updated_at of the newest Item the last completed cycle read */
  since: Date | null;
  /** ETag of that cycle's issues listing */
  etag: string | null;
  /** open pull requests known at the last cycle */
  openPulls: number[];
  /** per open pull request number, its mark as last read (what changes without updated_at) */
  pullMarks: Record<string, string>;
  /** the last cycle's listing found nothing past the watermark it started from */
  settled: boolean;
  /** signature of the active Loops the cursor was written for */
  loops: string | null;
}

export interface PollState {
  cursor: PollCursor;
  resetPending: boolean;
  labelsEtag: string | null;
  /** when the last cycle that wrote the cursor completed */
  lastCompletedAt: Date | null;
}

export const EMPTY_CURSOR: PollCursor = Object.freeze({ since: null, etag: null, openPulls: [], pullMarks: {}, settled: false, loops: null }) as PollCursor;

export async function readPollState(db: Db, repo: string): Promise<PollState> {
  const row = await first<{
    cursor_since: Date | null;
    cursor_etag: string | null;
    cursor_open_pulls: number[] | null;
    cursor_pull_marks: Record<string, string> | null;
    cursor_settled: boolean;
    cursor_loops: string | null;
    reset_pending: boolean;
    labels_etag: string | null;
    last_polled_at: Date | null;
  }>(
    db.pool,
    sql`SELECT cursor_since, cursor_etag, cursor_open_pulls, cursor_pull_marks, cursor_settled, cursor_loops, reset_pending, labels_etag, last_polled_at
       FROM repositories WHERE full_name = ${repo.toLowerCase()}`,
  );
  if (!row) return { cursor: EMPTY_CURSOR, resetPending: false, labelsEtag: null, lastCompletedAt: null };
  return {
    cursor: {
      since: row.cursor_since,
      etag: row.cursor_etag,
      openPulls: row.cursor_open_pulls ?? [],
      pullMarks: row.cursor_pull_marks ?? {},
      settled: row.cursor_settled,
      loops: row.cursor_loops,
    },
    resetPending: row.reset_pending,
    labelsEtag: row.labels_etag,
    lastCompletedAt: row.last_polled_at,
  };
}

/**
 * Writes the cursor of a completed cycle, unless another cycle of the same repository moved it
 * meanwhile (then that one's is kept). A pending budget reset is cleared only when no further
 * reset happened since this cycle began.
 */
export async function writeCursor(
  db: Db,
  repo: string,
  previous: PollCursor,
  next: PollCursor,
  cycle: { startedAt: Date; clearsReset: boolean; completedAt: Date },
): Promise<boolean> {
  const fullName = repo.toLowerCase();
  const { rowCount } = await query(
    db.pool,
    sql`UPDATE repositories SET cursor_since = ${next.since}, cursor_etag = ${next.etag}, cursor_open_pulls = ${next.openPulls}, cursor_loops = ${next.loops},
            cursor_pull_marks = ${JSON.stringify(next.pullMarks)}, cursor_settled = ${next.settled},
            reset_pending = CASE WHEN ${cycle.clearsReset} AND NOT EXISTS (SELECT 1 FROM cycle_budgets WHERE repo = ${fullName} AND reset_at >= ${cycle.startedAt})
                                 THEN false ELSE reset_pending END,
            last_polled_at = ${cycle.completedAt}, poll_error = NULL, poll_error_at = NULL, updated_at = now()
      WHERE full_name = ${fullName}
        AND cursor_since IS NOT DISTINCT FROM ${previous.since} AND cursor_etag IS NOT DISTINCT FROM ${previous.etag} AND cursor_loops IS NOT DISTINCT FROM ${previous.loops}`,
  );
  return rowCount === 1;
}

/** A failed cycle: the cursor stays, the error is shown in Needs you. */
export async function recordPollFailure(db: Db, repo: string, message: string, at: Date): Promise<void> {
  await query(db.pool, sql`UPDATE repositories SET poll_error = ${message}, poll_error_at = ${at}, updated_at = now() WHERE full_name = ${repo.toLowerCase()}`);
}

/** The ETag of the repository's labels listing, written only when it changed. */
export async function storeLabelsEtag(db: Db, repo: string, etag: string | null): Promise<void> {
  await query(db.pool, sql`UPDATE repositories SET labels_etag = ${etag} WHERE full_name = ${repo.toLowerCase()} AND labels_etag IS DISTINCT FROM ${etag}`);
}
