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

/** SQL selecting the rows to insert: `$attempt`, `$run` and three parallel arrays (stream, text, at). */
export const transcriptRowsSql = (attempt: string, run: string, streams: string, texts: string, ats: string): string =>
  `INSERT INTO transcript_entries (attempt_id, run_id, stream, text, at)
   SELECT ${attempt}, ${run}, u.stream, u.text, u.at FROM unnest(${streams}::text[], ${texts}::text[], ${ats}::timestamptz[]) AS u(stream, text, at)`;

/** The three parallel arrays of `transcriptRowsSql`. */
export const transcriptColumns = (lines: readonly TranscriptLine[]): [string[], string[], Date[]] => [
  lines.map((l) => l.stream),
  lines.map((l) => l.text),
  lines.map((l) => l.at),
];
