import type { RunStateName } from "../../engine/run-state";
import type { Db } from "../kernel/db";
import { first, rows, sql, type Statement } from "../kernel/sql";

/**
 * Transcript rows: an Attempt's output, stored in batches. The writer (runner/transcript-writer)
 * inserts them as they come; the last batch is stored by the statement that records the
 * Attempt's outcome, so an outcome is never seen without the lines before it.
 */

/** Channel told the Run id whenever new transcript rows are stored (the dashboard streams them). */
export const TRANSCRIPT_CHANNEL = "atelier_transcript";

export interface TranscriptLine {
  stream: string;
  text: string;
  at: Date;
}

/** SQL inserting an Attempt's `lines`, as three parallel arrays (stream, text, at). */
export const transcriptRowsSql = (attemptId: string, runId: string, lines: readonly TranscriptLine[]): Statement =>
  sql`INSERT INTO transcript_entries (attempt_id, run_id, stream, text, at)
   SELECT ${attemptId}, ${runId}, u.stream, u.text, u.at
     FROM unnest(${lines.map((l) => l.stream)}::text[], ${lines.map((l) => l.text)}::text[], ${lines.map((l) => l.at)}::timestamptz[]) AS u(stream, text, at)`;

export interface TranscriptEntryRow {
  /** the table's bigint, as text */
  id: string;
  attempt_id: string;
  stream: string;
  text: string;
  at: Date;
}

/** A Run's entries after `afterId`, in id order: the table's bigint, not the text the rows carry it as (10 after 9). */
export function transcriptEntriesAfter(db: Db, runId: string, afterId: string, limit: number): Promise<TranscriptEntryRow[]> {
  return rows<TranscriptEntryRow>(
    db.pool,
    sql`SELECT id::text AS id, attempt_id, stream, text, at FROM transcript_entries
      WHERE run_id = ${runId} AND id > ${afterId}::bigint ORDER BY transcript_entries.id LIMIT ${limit}`,
  );
}

export interface TranscriptRunRow {
  repo: string;
  state: RunStateName;
  pull_request_number: number | null;
  updated_at: Date;
}

/** What a live transcript shows of its Run (its state and pull request); undefined when there is no such Run. */
export function transcriptRunProgress(db: Db, runId: string): Promise<TranscriptRunRow | undefined> {
  return first<TranscriptRunRow>(db.pool, sql`SELECT repo, state::text AS state, pull_request_number, updated_at FROM runs WHERE id = ${runId}`);
}
