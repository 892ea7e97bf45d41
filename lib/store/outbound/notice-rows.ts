import type { Db } from "../kernel/db";
import { raw, rows, sql } from "../kernel/sql";

/**
 * The facts notices are found in (lib/outbound/notice-scan.ts), and the notice deliveries
 * written once per target and subject. Reads only what indexes reach: the Runs named, the
 * newest Waiting and unresolved failed Runs, the Attempts that ended in the last hour; the
 * budget asks, blocked Events and config errors that wait now.
 */

/** The targets subscribed to any notice. */
export interface NoticeTargetRow {
  id: number;
  installation_id: number | null;
  repo: string | null;
  loop: string | null;
  events: string[];
  created_at: Date;
}

export function noticeTargets(db: Db): Promise<NoticeTargetRow[]> {
  return rows<NoticeTargetRow>(
    db.pool,
    sql`SELECT id, installation_id, repo, loop, events, created_at FROM outbound_hooks WHERE cardinality(events) > 0 ORDER BY id`,
  );
}

/** A Run as its notices read it. */
export interface RunNoticeRow {
  id: string;
  repo: string;
  loop: string;
  number: number | null;
  state: string;
  waiting_reason: string | null;
  pull_request_number: number | null;
  updated_at: Date;
  ended_at: Date | null;
  title: string | null;
  installation_id: number | null;
  approval_reason: { token?: string; login?: string; permission?: string; needs?: string } | null;
  failed_attempt_id: string | null;
  failure_kind: string | null;
  failure_category: string | null;
  failure_message: string | null;
  engine_error: string | null;
  verify_attempt_id: string | null;
  verify_command: string | null;
  verify_exit_code: number | null;
  verify_ended_at: Date | null;
}

/** How far back the sweep looks for Attempts that ended (a notice the listener missed). */
const RECENT = raw(`interval '1 hour'`);
const SWEPT_RUNS = raw("200");

export function runNoticeRows(db: Db, runIds: readonly string[]): Promise<RunNoticeRow[]> {
  return rows<RunNoticeRow>(
    db.pool,
    sql`SELECT r.id, r.repo, r.loop, r.number, r.state, r.waiting_reason, r.pull_request_number, r.updated_at, r.ended_at, r.engine_error,
              i.title, p.installation_id, e.submission->'approvalReason' AS approval_reason,
              f.id AS failed_attempt_id, f.failure_kind, f.failure_category, f.failure_message,
              v.id AS verify_attempt_id, v.verify->>'command' AS verify_command, (v.verify->>'exitCode')::int AS verify_exit_code, v.ended_at AS verify_ended_at
         FROM runs r
         LEFT JOIN items i ON i.key = r.item_key
         LEFT JOIN repositories p ON p.full_name = r.repo
         LEFT JOIN events e ON e.id = r.event_id
         LEFT JOIN LATERAL (SELECT a.id, a.failure_kind, a.failure_category, a.failure_message FROM attempts a
                             WHERE a.run_id = r.id AND a.state = 'Failed' ORDER BY a.number DESC LIMIT 1) f ON true
         LEFT JOIN LATERAL (SELECT a.id, a.verify, a.ended_at FROM attempts a
                             WHERE a.run_id = r.id AND a.verify->>'passed' = 'false' ORDER BY a.number DESC LIMIT 1) v ON true
        WHERE r.id = ANY(${[...runIds]})`,
  );
}

/** The Runs the sweep looks at again: the newest Waiting and unresolved failed ones, and those whose Attempt ended lately. */
export async function sweptRunIds(db: Db): Promise<string[]> {
  const found = await rows<{ id: string }>(
    db.pool,
    sql`(SELECT r.id FROM runs r WHERE r.state = 'Waiting' ORDER BY r.updated_at DESC LIMIT ${SWEPT_RUNS})
        UNION (SELECT r.id FROM runs r WHERE r.state = 'Failed' AND r.resolved_failure_attempt_id IS DISTINCT FROM r.failed_attempt_id
                ORDER BY r.updated_at DESC LIMIT ${SWEPT_RUNS})
        UNION (SELECT a.run_id FROM attempts a WHERE a.ended_at > now() - ${RECENT} ORDER BY a.ended_at DESC LIMIT ${SWEPT_RUNS})`,
  );
  return found.map((r) => r.id);
}

export interface BudgetAskNoticeRow {
  item_key: string;
  repo: string;
  generation: number;
  ask: { loop?: string; maxCycles?: number } | null;
  asked_at: Date;
  number: number | null;
  title: string | null;
  installation_id: number | null;
}

export function budgetAskNoticeRows(db: Db): Promise<BudgetAskNoticeRow[]> {
  return rows<BudgetAskNoticeRow>(
    db.pool,
    sql`SELECT b.item_key, b.repo, b.generation, b.ask, COALESCE(b.asked_at, now()) AS asked_at, i.number, i.title, p.installation_id
         FROM (SELECT * FROM cycle_budgets WHERE ask IS NOT NULL ORDER BY asked_at DESC NULLS LAST LIMIT ${SWEPT_RUNS}) b
         LEFT JOIN items i ON i.key = b.item_key LEFT JOIN repositories p ON p.full_name = b.repo`,
  );
}

export interface ConfigErrorNoticeRow {
  repo: string;
  repository_id: number;
  installation_id: number;
  loop: string | null;
  error: string;
  updated_at: Date;
}

/** The repositories' config errors and their Loops' (a Loop's `if:` that does not parse…). */
export function configErrorNoticeRows(db: Db): Promise<ConfigErrorNoticeRow[]> {
  return rows<ConfigErrorNoticeRow>(
    db.pool,
    sql`SELECT p.full_name AS repo, p.id AS repository_id, p.installation_id, NULL AS loop, p.config_error AS error, p.updated_at
          FROM repositories p WHERE p.config_error IS NOT NULL AND p.removed_at IS NULL
        UNION ALL
        SELECT l.repo, p.id, p.installation_id, l.loop, l.error, l.updated_at
          FROM loop_runtime l JOIN repositories p ON p.full_name = l.repo WHERE l.error IS NOT NULL AND p.removed_at IS NULL
        LIMIT ${SWEPT_RUNS}`,
  );
}

/** One notice delivery to write. */
export interface NoticeDeliveryRow {
  hookId: number;
  runId: string | null;
  subject: string;
  payload: unknown;
}

/** Writes the deliveries not written yet (once per target and subject); returns the new ids. */
export async function insertNoticeDeliveries(db: Db, list: readonly NoticeDeliveryRow[]): Promise<number[]> {
  if (!list.length) return [];
  const inserted = await rows<{ id: number }>(
    db.pool,
    sql`INSERT INTO outbound_deliveries (hook_id, run_id, subject, payload)
        SELECT * FROM unnest(${list.map((d) => d.hookId)}::bigint[], ${list.map((d) => d.runId)}::text[], ${list.map((d) => d.subject)}::text[],
                             ${list.map((d) => JSON.stringify(d.payload))}::jsonb[])
        ON CONFLICT (hook_id, subject) WHERE subject IS NOT NULL DO NOTHING
        RETURNING id`,
  );
  return inserted.map((r) => r.id);
}
