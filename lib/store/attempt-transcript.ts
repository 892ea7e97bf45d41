import { announce } from "./announce";
import type { Db } from "./db";
import { TRANSCRIPT_CHANNEL, transcriptColumns, transcriptRowsSql, type TranscriptLine } from "./transcript-lines";

// the fragment the outcome's statement embeds too (lib/store/attempts.ts), so it takes placeholders
const INSERT = { name: "atelier-transcript-insert", text: transcriptRowsSql("$1", "$2", "$3", "$4", "$5") };

/**
 * Stores a batch of an Attempt's output in one multi-row insert, then tells the channel
 * `atelier_transcript` the Run id (batched with other Attempts' announcements, see announce.ts).
 */
export async function storeTranscriptBatch(db: Db, attemptId: string, runId: string, lines: readonly TranscriptLine[]): Promise<void> {
  await db.pool.query({ ...INSERT, values: [attemptId, runId, ...transcriptColumns(lines)] });
  announce(db.pool, TRANSCRIPT_CHANNEL, [runId]);
}
