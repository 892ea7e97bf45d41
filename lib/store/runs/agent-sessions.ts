import type { Db } from "../kernel/db";
import { transaction, type Sql } from "../kernel/transaction";
import { first, query, rows, sql } from "../kernel/sql";

/**
 * The Runs' kept agent sessions in Postgres (ADR 0082): one sealed blob per Run, in rows of at
 * most SESSION_CHUNK_BYTES, replaced whole by each save. The store never opens a blob (it holds
 * what lib/secrets/session-box.ts sealed); it fences each save by the saving Attempt's lease,
 * so a worker that lost its Attempt writes nothing over its successor's session.
 */

export const SESSION_CHUNK_BYTES = 1024 * 1024;

/** Who saves: the Attempt, open under this lease token. */
export interface SessionWriter {
  runId: string;
  attemptId: string;
  leaseToken: string;
}

export interface SessionBlobMeta {
  kind: string;
  sessionId: string;
  /** The repository's GitHub id (its retirement deletes the session); null: not registered. */
  repositoryId: string | null;
}

export interface StoredSessionBlob {
  attemptId: string;
  kind: string;
  sessionId: string;
  blob: Buffer;
}

/** Keeps `blob` as the Run's session; false (nothing written) when the Attempt is not open under that lease. */
export async function saveSessionBlob(db: Db, writer: SessionWriter, meta: SessionBlobMeta, blob: Buffer): Promise<boolean> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < blob.length; at += SESSION_CHUNK_BYTES) chunks.push(blob.subarray(at, at + SESSION_CHUNK_BYTES));
  return transaction(db, async (tx) => {
    // held until commit: the sweep's close of this Attempt waits for the save, or the save sees it closed
    const open = await first(
      tx,
      sql`SELECT 1 FROM attempts WHERE id = ${writer.attemptId} AND run_id = ${writer.runId} AND state = 'Running' AND lease_token = ${writer.leaseToken} FOR SHARE`,
    );
    if (!open) return false;
    await query(
      tx,
      sql`INSERT INTO agent_sessions (run_id, attempt_id, repository_id, kind, session_id, bytes, chunks, saved_at)
          VALUES (${writer.runId}, ${writer.attemptId}, ${meta.repositoryId}::bigint, ${meta.kind}, ${meta.sessionId}, ${blob.length}, ${chunks.length}, now())
          ON CONFLICT (run_id) DO UPDATE SET attempt_id = EXCLUDED.attempt_id, repository_id = EXCLUDED.repository_id, kind = EXCLUDED.kind,
            session_id = EXCLUDED.session_id, bytes = EXCLUDED.bytes, chunks = EXCLUDED.chunks, saved_at = EXCLUDED.saved_at`,
    );
    await query(tx, sql`DELETE FROM agent_session_chunks WHERE run_id = ${writer.runId}`);
    for (const [seq, data] of chunks.entries()) {
      await query(tx, sql`INSERT INTO agent_session_chunks (run_id, seq, data) VALUES (${writer.runId}, ${seq}, ${data})`);
    }
    return true;
  });
}

/** The Run's kept blob, or null. */
export async function loadSessionBlob(db: Db, runId: string): Promise<StoredSessionBlob | null> {
  return transaction(db, async (tx) => {
    const head = await first<{ attempt_id: string; kind: string; session_id: string; chunks: number }>(
      tx,
      sql`SELECT attempt_id, kind, session_id, chunks FROM agent_sessions WHERE run_id = ${runId}`,
    );
    if (!head) return null;
    const parts = await rows<{ data: Buffer }>(tx, sql`SELECT data FROM agent_session_chunks WHERE run_id = ${runId} ORDER BY seq`);
    if (parts.length !== head.chunks) return null;
    return { attemptId: head.attempt_id, kind: head.kind, sessionId: head.session_id, blob: Buffer.concat(parts.map((p) => p.data)) };
  });
}

/** Deletes the kept sessions of these Runs (retention calls it with the Runs it deletes; a Run's deletion cascades anyway). */
export async function deleteRunSessions(on: Db | Sql, runIds: readonly string[]): Promise<number> {
  if (runIds.length === 0) return 0;
  const done = await query(isDb(on) ? on.pool : on, sql`DELETE FROM agent_sessions WHERE run_id = ANY(${runIds}::text[])`);
  return done.rowCount ?? 0;
}

const isDb = (on: Db | Sql): on is Db => "pool" in on;

/**
 * Beside the close of an interrupted Attempt, in its transaction and after it (the close waited
 * for a save in flight): the kept session's id on the Attempt when it saved it, and on the Run as
 * the session its next Attempts resume (ADR 0011's resume_session). Nothing when none is kept, or
 * when an Attempt of another agent kept it (an Edit and retry changed the agent: a new conversation).
 */
export async function recordKeptSession(tx: Sql, runId: string, attemptId: string): Promise<void> {
  await query(
    tx,
    sql`WITH kept AS (
         SELECT s.session_id, s.attempt_id FROM agent_sessions s JOIN attempts saver ON saver.id = s.attempt_id JOIN runs r ON r.id = s.run_id
          WHERE s.run_id = ${runId} AND saver.agent IS NOT DISTINCT FROM r.agent
       ), on_attempt AS (UPDATE attempts a SET session_id = kept.session_id FROM kept WHERE a.id = ${attemptId} AND kept.attempt_id = a.id)
     UPDATE runs r SET resume_session = kept.session_id FROM kept WHERE r.id = ${runId}`,
  );
}
