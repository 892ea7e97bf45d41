import type { Db } from "../kernel/db";
import { advisoryKey } from "../kernel/locks";
import { first, query, raw, rows, sql } from "../kernel/sql";

/**
 * The `run_mirrors` row of a Run: the GitHub ids of its check run and Item comment, what was
 * last synced (hashes, so an unchanged view makes no API call), and `updated_at`, the version
 * of the Run (`runs.updated_at`) the mirror last caught up with.
 */
export interface SyncedState {
  /** Hash of the check run body and its commit, as last written to GitHub. */
  check: string | null;
  /** Whether that check run is completed (GitHub keeps a completed run's conclusion). */
  checkCompleted: boolean;
  /** Hash of the comment body as last written. */
  comment: string | null;
}

export interface RunMirror {
  runId: string;
  checkRunId: number | null;
  checkSha: string | null;
  commentId: number | null;
  synced: SyncedState;
}

export const NOTHING_SYNCED: SyncedState = Object.freeze({ check: null, checkCompleted: false, comment: null });

interface MirrorRow {
  run_id: string;
  check_run_id: number | null;
  check_sha: string | null;
  comment_id: number | null;
  last_synced: string | null;
}

function parseSynced(text: string | null): SyncedState {
  if (!text) return { ...NOTHING_SYNCED };
  try {
    const v = JSON.parse(text) as Partial<SyncedState>;
    return {
      check: typeof v.check === "string" ? v.check : null,
      checkCompleted: v.checkCompleted === true,
      comment: typeof v.comment === "string" ? v.comment : null,
    };
  } catch {
    return { ...NOTHING_SYNCED };
  }
}

function toMirror(row: MirrorRow): RunMirror {
  return {
    runId: row.run_id,
    checkRunId: row.check_run_id === null ? null : Number(row.check_run_id),
    checkSha: row.check_sha,
    commentId: row.comment_id === null ? null : Number(row.comment_id),
    synced: parseSynced(row.last_synced),
  };
}

const COLUMNS = raw("run_id, check_run_id, check_sha, comment_id, last_synced");

/**
 * The Run's mirror row, created when missing. A new row's version is -infinity, so the sweep
 * sees it behind until a sync completes.
 */
export async function ensureRunMirror(db: Db, runId: string): Promise<RunMirror> {
  const row = await first<MirrorRow>(
    db.pool,
    sql`WITH ins AS (
          INSERT INTO run_mirrors (run_id, updated_at) VALUES (${runId}, '-infinity') ON CONFLICT (run_id) DO NOTHING RETURNING ${COLUMNS})
        SELECT ${COLUMNS} FROM ins UNION ALL SELECT ${COLUMNS} FROM run_mirrors WHERE run_id = ${runId}`,
  );
  return toMirror(row!);
}

/** Remembers the check run the Run now shows on, in the step that created or adopted it. */
export async function recordCheckRun(db: Db, runId: string, checkRunId: number, sha: string, synced: SyncedState): Promise<void> {
  await query(db.pool, sql`UPDATE run_mirrors SET check_run_id = ${checkRunId}, check_sha = ${sha}, last_synced = ${JSON.stringify(synced)} WHERE run_id = ${runId}`);
}

/** Remembers the Run's comment, in the step that created or found it (null forgets a deleted one). */
export async function recordComment(db: Db, runId: string, commentId: number | null, synced: SyncedState): Promise<void> {
  await query(db.pool, sql`UPDATE run_mirrors SET comment_id = ${commentId}, last_synced = ${JSON.stringify(synced)} WHERE run_id = ${runId}`);
}

/** Records what was synced and the Run version the mirror caught up with. */
export async function recordSynced(db: Db, runId: string, synced: SyncedState, version: string): Promise<void> {
  await query(db.pool, sql`UPDATE run_mirrors SET last_synced = ${JSON.stringify(synced)}, updated_at = ${version}::timestamp WHERE run_id = ${runId}`);
}

/** The Run of a repository (owner/name, lower-cased) whose mirror shows this check run. */
export async function runIdForCheckRun(db: Db, checkRunId: number, repo: string): Promise<string | null> {
  const row = await first<{ run_id: string }>(
    db.pool,
    sql`SELECT m.run_id FROM run_mirrors m JOIN runs r ON r.id = m.run_id WHERE m.check_run_id = ${checkRunId} AND r.repo = ${repo} LIMIT 1`,
  );
  return row?.run_id ?? null;
}

/** The check run the Run's mirror shows it on now, as text; null when it has none (or no mirror). */
export async function mirroredCheckRunId(db: Db, runId: string): Promise<string | null> {
  const row = await first<{ check_run_id: string | null }>(db.pool, sql`SELECT check_run_id::text FROM run_mirrors WHERE run_id = ${runId}`);
  return row?.check_run_id ?? null;
}

/** How far back the sweep looks for Runs whose mirror fell behind. */
export const SWEEP_WINDOW = "7 days";

/**
 * Runs changed since their mirror last caught up (or never mirrored), newest change first:
 * what a missed notification left behind. The Runs people look at now come first; a backlog
 * longer than `limit` is worked through by the next sweeps, and never holds the newest back.
 */
export async function runsBehindTheirMirror(db: Db, limit = 500): Promise<string[]> {
  const behind = await rows<{ id: string }>(
    db.pool,
    sql`SELECT r.id FROM runs r LEFT JOIN run_mirrors m ON m.run_id = r.id
         WHERE (m.run_id IS NULL OR r.updated_at > m.updated_at) AND r.updated_at > now() - ${SWEEP_WINDOW}::interval
         ORDER BY r.updated_at DESC LIMIT ${limit}`,
  );
  return behind.map((r) => r.id);
}

/**
 * Runs `fn` holding the Run's mirror lock (a session advisory lock on a connection of its
 * own): two syncs of one Run never interleave, so neither creates what the other is creating.
 * A worker that dies drops its connection, and the lock with it.
 */
export async function withRunMirrorLock<T>(db: Db, runId: string, fn: () => Promise<T>): Promise<T> {
  const key = advisoryKey("run-mirror", runId).toString();
  const client = await db.pool.connect();
  // a connection whose lock state is unknown is closed rather than reused
  let clean = false;
  try {
    await query(client, sql`SELECT pg_advisory_lock(${key}::bigint)`);
    try {
      return await fn();
    } finally {
      await query(client, sql`SELECT pg_advisory_unlock(${key}::bigint)`);
      clean = true;
    }
  } finally {
    client.release(!clean);
  }
}
