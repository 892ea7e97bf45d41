import { canonicalJson, contentHash } from "../engine/content-hash";
import type { LoopDefinition } from "../loops/config-schema";
import type { Db } from "../store/db";

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

/** GitHub timestamps have one-second resolution: the listing reads a little before the watermark. */
export const SINCE_OVERLAP_MS = 5_000;

export const EMPTY_CURSOR: PollCursor = Object.freeze({ since: null, etag: null, openPulls: [], pullMarks: {}, settled: false, loops: null }) as PollCursor;

export async function readPollState(db: Db, repo: string): Promise<PollState> {
  const { rows } = await db.pool.query<{
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
    `SELECT cursor_since, cursor_etag, cursor_open_pulls, cursor_pull_marks, cursor_settled, cursor_loops, reset_pending, labels_etag, last_polled_at
       FROM repositories WHERE full_name = $1`,
    [repo.toLowerCase()],
  );
  const row = rows[0];
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
 * The signature of the Loops that act on Items: the unpaused issues and pull_requests Loops
 * with their definitions. Pausing, unpausing or editing one of them changes it.
 */
export function activeLoopSignature(loops: readonly LoopDefinition[]): string {
  const active = loops
    .map(({ line: _line, ...definition }) => definition)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return contentHash(JSON.parse(canonicalJson(active)));
}

/**
 * Whether this cycle must start from an empty cursor: an operator reset a cycle budget, or the
 * set of active Loops changed since the cursor was written (every Item is judged again).
 */
export function startsFromEmptyCursor(state: PollState, signature: string): boolean {
  return state.resetPending || state.cursor.loops !== signature;
}

/** The `since` to send: a little before the watermark, or none. */
export function listingSince(cursor: PollCursor): Date | null {
  return cursor.since ? new Date(cursor.since.getTime() - SINCE_OVERLAP_MS) : null;
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
  const { rowCount } = await db.pool.query(
    `UPDATE repositories SET cursor_since = $2, cursor_etag = $3, cursor_open_pulls = $4, cursor_loops = $5,
            cursor_pull_marks = $12, cursor_settled = $13,
            reset_pending = CASE WHEN $6 AND NOT EXISTS (SELECT 1 FROM cycle_budgets WHERE repo = $1 AND reset_at >= $7)
                                 THEN false ELSE reset_pending END,
            last_polled_at = $8, poll_error = NULL, poll_error_at = NULL, updated_at = now()
      WHERE full_name = $1
        AND cursor_since IS NOT DISTINCT FROM $9 AND cursor_etag IS NOT DISTINCT FROM $10 AND cursor_loops IS NOT DISTINCT FROM $11`,
    [
      repo.toLowerCase(),
      next.since,
      next.etag,
      next.openPulls,
      next.loops,
      cycle.clearsReset,
      cycle.startedAt,
      cycle.completedAt,
      previous.since,
      previous.etag,
      previous.loops,
      JSON.stringify(next.pullMarks),
      next.settled,
    ],
  );
  return rowCount === 1;
}

/** A failed cycle: the cursor stays, the error is shown in Needs you. */
export async function recordPollFailure(db: Db, repo: string, message: string, at: Date): Promise<void> {
  await db.pool.query(`UPDATE repositories SET poll_error = $2, poll_error_at = $3, updated_at = now() WHERE full_name = $1`, [
    repo.toLowerCase(),
    message,
    at,
  ]);
}

export async function storeLabelsEtag(db: Db, repo: string, etag: string | null): Promise<void> {
  await db.pool.query(`UPDATE repositories SET labels_etag = $2 WHERE full_name = $1 AND labels_etag IS DISTINCT FROM $2`, [repo.toLowerCase(), etag]);
}
