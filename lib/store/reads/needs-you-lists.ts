import { RUN_STATE_SQL } from "../../engine/run-predicates";
import type { ReviewReason } from "../../loops/steering";
import type { Db } from "../kernel/db";
import { ENGINE_FAILED_REASON } from "../runs/engine-failures";
import type { ApprovalReason } from "../runs/claim";
import { first, raw, rows, sql, type Statement } from "../kernel/sql";

/**
 * Needs you's reads: the counts per kind in one round trip, and the newest entries of each
 * kind, picked before anything joins them. Tuned for 1,000,000 Runs (ADR 0024, amendment):
 * change the text only with `npm run bench -- scale`.
 */

/** How many of each kind are listed at most; the counts are exact. */
export const NEEDS_LIMIT = 100;

/**
 * A Waiting Run parked by engine failures, and one that waits for its approval: every other
 * Waiting Run. The parked ones are found by the partial index on `waiting_reason`; the count
 * of those awaiting approval is the Waiting count (an index-only scan of runs_repo_state_idx)
 * less theirs, rather than a visit of every Waiting Run.
 */
const WAITING = raw(`r.state = 'Waiting'`);
const ENGINE_PARKED = sql`${WAITING} AND r.waiting_reason = ${ENGINE_FAILED_REASON}`;
const AWAITS_APPROVAL = sql`${WAITING} AND r.waiting_reason IS DISTINCT FROM ${ENGINE_FAILED_REASON}`;

/** A Run whose commits wait for a writer's review (ADR 0058). */
const REVIEWING = raw(RUN_STATE_SQL.isReviewing("r.state"));

/** A Failed Run whose latest failed Attempt nobody resolved (the partial index runs_unresolved_failures holds them). */
const UNRESOLVED_FAILURE = raw(`r.state = 'Failed' AND r.resolved_failure_attempt_id IS DISTINCT FROM r.failed_attempt_id`);

const LIMIT = raw(String(NEEDS_LIMIT));

/** The newest NEEDS_LIMIT Runs `r` where `cond` holds — picked before anything joins them, so only those join. */
const newest = (cond: Statement): Statement => sql`(SELECT * FROM runs r WHERE ${cond} ORDER BY r.updated_at DESC LIMIT ${LIMIT}) r`;

/** Counts (as Postgres's bigint text) of the kinds Needs you reads here; `waiting` holds the engine-parked ones too. */
export interface NeedCountsRow {
  waiting: string;
  failure: string;
  engine_failure: string;
  budget_ask: string;
  config_error: string;
  loop_error: string;
  poll_error: string;
  review: string;
}

export async function countNeedRows(db: Db, repos: string[]): Promise<NeedCountsRow> {
  const row = await first<NeedCountsRow>(
    db.pool,
    sql`SELECT
       (SELECT count(*) FROM runs r WHERE r.repo = ANY(${repos}) AND ${WAITING}) AS waiting,
       (SELECT count(*) FROM runs r WHERE r.repo = ANY(${repos}) AND ${UNRESOLVED_FAILURE}) AS failure,
       (SELECT count(*) FROM runs r WHERE r.repo = ANY(${repos}) AND ${ENGINE_PARKED}) AS engine_failure,
       (SELECT count(*) FROM cycle_budgets b WHERE b.repo = ANY(${repos}) AND b.ask IS NOT NULL) AS budget_ask,
       (SELECT count(*) FROM repositories p WHERE p.full_name = ANY(${repos}) AND p.config_error IS NOT NULL) AS config_error,
       (SELECT count(*) FROM loop_runtime l WHERE l.repo = ANY(${repos}) AND l.error IS NOT NULL) AS loop_error,
       (SELECT count(*) FROM repositories p WHERE p.full_name = ANY(${repos}) AND p.poll_error IS NOT NULL) AS poll_error,
       (SELECT count(*) FROM runs r WHERE r.repo = ANY(${repos}) AND ${REVIEWING}) AS review`,
  );
  return row!;
}

/** What an entry about one Run reads of it. */
export interface NeedRunRow {
  id: string;
  repo: string;
  loop: string;
  item_key: string;
  number: number | null;
  updated_at: Date;
  title: string | null;
}

export async function listAwaitingApproval(db: Db, repos: string[]): Promise<(NeedRunRow & { waiting_reason: string | null; approval_reason: ApprovalReason | null })[]> {
  return rows(
    db.pool,
    sql`SELECT r.id, r.repo, r.loop, r.item_key, r.number, r.updated_at, r.waiting_reason, i.title,
              e.submission->'approvalReason' AS approval_reason
         FROM ${newest(sql`r.repo = ANY(${repos}) AND ${AWAITS_APPROVAL}`)}
         LEFT JOIN items i ON i.key = r.item_key LEFT JOIN events e ON e.id = r.event_id
        ORDER BY r.updated_at DESC`,
  );
}

/** The Runs whose commits wait for a writer, with why (ADR 0058). */
export async function listAwaitingReview(db: Db, repos: string[]): Promise<(NeedRunRow & { review_reason: ReviewReason | null })[]> {
  return rows(
    db.pool,
    sql`SELECT r.id, r.repo, r.loop, r.item_key, r.number, r.updated_at, r.review_reason, i.title
         FROM ${newest(sql`r.repo = ANY(${repos}) AND ${REVIEWING}`)}
         LEFT JOIN items i ON i.key = r.item_key
        ORDER BY r.updated_at DESC`,
  );
}

export interface UnresolvedFailureRow extends NeedRunRow {
  engine_error: string | null;
  engine_failures: number;
  failure_kind: string | null;
  failure_category: string | null;
  failure_message: string | null;
}

export async function listUnresolvedFailures(db: Db, repos: string[]): Promise<UnresolvedFailureRow[]> {
  return rows<UnresolvedFailureRow>(
    db.pool,
    sql`SELECT r.id, r.repo, r.loop, r.item_key, r.number, r.updated_at, i.title, r.engine_error, r.engine_failures, f.failure_kind, f.failure_category, f.failure_message
         FROM ${newest(sql`r.repo = ANY(${repos}) AND ${UNRESOLVED_FAILURE}`)}
         LEFT JOIN items i ON i.key = r.item_key
         LEFT JOIN LATERAL (SELECT a.failure_kind, a.failure_category, a.failure_message FROM attempts a
                             WHERE a.run_id = r.id AND a.state = 'Failed' ORDER BY a.number DESC LIMIT 1) f ON true
        ORDER BY r.updated_at DESC`,
  );
}

export async function listEngineParked(db: Db, repos: string[]): Promise<(NeedRunRow & { engine_failures: number; engine_error: string | null })[]> {
  return rows(
    db.pool,
    sql`SELECT r.id, r.repo, r.loop, r.item_key, r.number, r.updated_at, r.engine_failures, r.engine_error, i.title
         FROM ${newest(sql`r.repo = ANY(${repos}) AND ${ENGINE_PARKED}`)} LEFT JOIN items i ON i.key = r.item_key
        ORDER BY r.updated_at DESC`,
  );
}

export interface BudgetAskRow {
  item_key: string;
  repo: string;
  ask: { loop?: string; maxCycles?: number; used?: number } | null;
  asked_at: Date | null;
  generation: number;
  number: number | null;
  title: string | null;
}

export async function listBudgetAsks(db: Db, repos: string[]): Promise<BudgetAskRow[]> {
  return rows<BudgetAskRow>(
    db.pool,
    sql`SELECT b.item_key, b.repo, b.ask, b.asked_at, b.generation, i.number, i.title
         FROM (SELECT * FROM cycle_budgets b WHERE b.repo = ANY(${repos}) AND b.ask IS NOT NULL
                ORDER BY b.asked_at DESC NULLS LAST LIMIT ${LIMIT}) b
         LEFT JOIN items i ON i.key = b.item_key
        ORDER BY b.asked_at DESC NULLS LAST`,
  );
}

export interface RepositoryErrorRow {
  full_name: string;
  default_branch: string;
  config_error: string | null;
  poll_error: string | null;
  poll_error_at: Date | null;
  updated_at: Date;
}

export async function listRepositoryErrors(db: Db, repos: string[]): Promise<RepositoryErrorRow[]> {
  return rows<RepositoryErrorRow>(
    db.pool,
    sql`SELECT full_name, default_branch, config_error, poll_error, poll_error_at, updated_at
         FROM repositories WHERE full_name = ANY(${repos}) AND (config_error IS NOT NULL OR poll_error IS NOT NULL)`,
  );
}

export interface LoopErrorRow {
  repo: string;
  loop: string;
  error: string;
  error_line: number | null;
  updated_at: Date;
  default_branch: string | null;
}

export async function listLoopErrors(db: Db, repos: string[]): Promise<LoopErrorRow[]> {
  return rows<LoopErrorRow>(
    db.pool,
    sql`SELECT l.repo, l.loop, l.error, l.error_line, l.updated_at, p.default_branch
         FROM loop_runtime l LEFT JOIN repositories p ON p.full_name = l.repo
        WHERE l.repo = ANY(${repos}) AND l.error IS NOT NULL
        ORDER BY l.updated_at DESC LIMIT ${LIMIT}`,
  );
}
