import { announce } from "../kernel/announce";
import type { Db } from "../kernel/db";
import { prepared } from "../kernel/sql";
import { TRANSCRIPT_CHANNEL, transcriptRowsSql, type TranscriptLine } from "./transcript-lines";

/**
 * Stores a batch of an Attempt's output in one multi-row insert, then tells the channel
 * `atelier_transcript` the Run id (batched with other Attempts' announcements, see announce.ts).
 */
export async function storeTranscriptBatch(db: Db, attemptId: string, runId: string, lines: readonly TranscriptLine[]): Promise<void> {
  await prepared(db.pool, "atelier-transcript-insert", transcriptRowsSql(attemptId, runId, lines));
  announce(db.pool, TRANSCRIPT_CHANNEL, [runId]);
}
