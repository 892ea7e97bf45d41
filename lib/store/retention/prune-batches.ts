import type { Db } from "../kernel/db";
import { first, query, raw, rows, sql } from "../kernel/sql";
import { RUN_STATE_SQL } from "../../engine/run-predicates";

/**
 * Retention's writes (ADR 0085), one batch each, each its own short statement: it takes no
 * (Loop, Item) lock, locks no Run, and skips the rows another transaction holds (SKIP LOCKED), so
 * a claim, an Attempt's outcome or an operator never waits for it longer than one batch's
 * statement; a batch returns how many rows it pruned, 0 once nothing older than the horizon is left.
 */

/** How many lines of an Attempt's transcript are kept after its prune (with its summary and usage). */
export const KEPT_TRANSCRIPT_LINES = 20;

export type PrunedKind = "transcripts" | "event_payloads" | "audit" | "deliveries";

const horizonSql = (horizon: Date) => sql`(${horizon.toISOString()}::timestamptz AT TIME ZONE 'UTC')`;

/**
 * Cuts the transcripts of up to `limit` Attempts that ended before `horizon` to their last
 * KEPT_TRANSCRIPT_LINES lines, and marks them pruned. Returns the Attempts pruned and the lines dropped.
 */
export async function pruneTranscriptBatch(db: Db, horizon: Date, limit: number): Promise<{ attempts: number; lines: number }> {
  const row = await first<{ attempts: number; lines: number }>(
    db.pool,
    sql`WITH batch AS (
       SELECT id, run_id FROM attempts
        WHERE transcript_pruned_at IS NULL AND ended_at IS NOT NULL AND ended_at < ${horizonSql(horizon)}
        ORDER BY ended_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
     ), cut AS MATERIALIZED (
       -- per Attempt, the id of the oldest line kept (index transcript_entries(run_id, id), read backward)
       SELECT b.id, b.run_id, (SELECT t.id FROM transcript_entries t WHERE t.run_id = b.run_id AND t.attempt_id = b.id ORDER BY t.id DESC
                                OFFSET ${KEPT_TRANSCRIPT_LINES - 1} LIMIT 1) AS first_kept
         FROM batch b
     ), dropped AS (
       -- the lines before it, found by the same index per Attempt (OFFSET 0 keeps it a lookup per Attempt), deleted by their ids
       DELETE FROM transcript_entries WHERE id = ANY (ARRAY(
         SELECT t.id FROM cut c JOIN LATERAL (
           SELECT t.id FROM transcript_entries t WHERE t.run_id = c.run_id AND t.id < c.first_kept AND t.attempt_id = c.id OFFSET 0
         ) t ON true WHERE c.first_kept IS NOT NULL))
       RETURNING 1
     ), marked AS (
       UPDATE attempts a SET transcript_pruned_at = now() FROM batch b WHERE a.id = b.id RETURNING 1
     )
     SELECT (SELECT count(*) FROM marked)::int AS attempts, (SELECT count(*) FROM dropped)::int AS lines`,
  );
  return row ?? { attempts: 0, lines: 0 };
}

/**
 * Sheds the payload (the submission) of up to `limit` Events received before `horizon`, keeping
 * their keys: the ledger still recognizes the same content. Kept whole: an Event whose Run is
 * open, and the newest Event of each Loop and Item (the next one compares its texts with it).
 */
export async function pruneEventPayloadBatch(db: Db, horizon: Date, limit: number): Promise<number> {
  const row = await first<{ pruned: number }>(
    db.pool,
    sql`WITH batch AS (
       SELECT e.id FROM events e
        WHERE e.payload_pruned_at IS NULL AND e.received_at < ${horizonSql(horizon)}
          AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = e.run_id AND ${raw(RUN_STATE_SQL.isOpen("r.state"))})
          AND EXISTS (SELECT 1 FROM events n WHERE n.loop = e.loop AND n.item_key = e.item_key AND n.received_at > e.received_at)
        ORDER BY e.received_at LIMIT ${limit} FOR UPDATE OF e SKIP LOCKED
     ), shed AS (
       UPDATE events e SET submission = '{}'::jsonb, payload_pruned_at = now() FROM batch b WHERE e.id = b.id RETURNING 1
     )
     SELECT count(*)::int AS pruned FROM shed`,
  );
  return row?.pruned ?? 0;
}

/** Deletes up to `limit` audit rows older than `horizon`, oldest first. */
export async function pruneAuditBatch(db: Db, horizon: Date, limit: number): Promise<number> {
  const deleted = await query(
    db.pool,
    sql`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ${horizonSql(horizon)} ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
  );
  return deleted.rowCount ?? 0;
}

/** Deletes up to `limit` finished outbound deliveries and received webhook deliveries older than `horizon` (a pending delivery stays). */
export async function pruneDeliveryBatch(db: Db, horizon: Date, limit: number): Promise<number> {
  const outbound = await query(
    db.pool,
    sql`DELETE FROM outbound_deliveries WHERE id IN (
          SELECT id FROM outbound_deliveries WHERE status <> 'pending' AND created_at < ${horizonSql(horizon)} ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
  );
  const inbound = await query(
    db.pool,
    sql`DELETE FROM webhook_deliveries WHERE id IN (
          SELECT id FROM webhook_deliveries WHERE received_at < ${horizonSql(horizon)} ORDER BY received_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
  );
  return (outbound.rowCount ?? 0) + (inbound.rowCount ?? 0);
}

/** Notes what one sweep pruned of a kind, when it pruned any (the Usage page reads it). */
export async function recordSweep(db: Db, kind: PrunedKind, pruned: number, horizon: Date): Promise<void> {
  if (pruned > 0) await query(db.pool, sql`INSERT INTO retention_sweeps (kind, rows, horizon) VALUES (${kind}, ${pruned}, ${horizonSql(horizon)})`);
}

export interface PrunedSummary {
  kind: PrunedKind;
  /** rows pruned by every sweep */
  total: number;
  /** the last sweep: when, how many, and its horizon */
  lastAt: Date | null;
  lastRows: number;
  horizon: Date | null;
}

/** Per kind, what the sweeps pruned in all and the last one that pruned anything. */
export async function readPrunedSummary(db: Db): Promise<PrunedSummary[]> {
  const found = await rows<{ kind: PrunedKind; total: string; last_at: Date | null; last_rows: number | null; horizon: Date | null }>(
    db.pool,
    sql`SELECT k.kind, COALESCE(t.total, 0)::text AS total, l.at AS last_at, l.rows AS last_rows, l.horizon
          FROM (SELECT DISTINCT kind FROM retention_sweeps) k
          LEFT JOIN LATERAL (SELECT sum(rows) AS total FROM retention_sweeps s WHERE s.kind = k.kind) t ON true
          LEFT JOIN LATERAL (SELECT at, rows, horizon FROM retention_sweeps s WHERE s.kind = k.kind ORDER BY at DESC, id DESC LIMIT 1) l ON true
         ORDER BY k.kind`,
  );
  return found.map((r) => ({ kind: r.kind, total: Number(r.total), lastAt: r.last_at, lastRows: r.last_rows ?? 0, horizon: r.horizon }));
}
