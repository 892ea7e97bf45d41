import type { ReviewReason } from "../../loops/steering";
import type { RunStateName } from "../../engine/run-state";
import type { Db } from "../kernel/db";
import type { Submission } from "../runs/claim";
import { first, rows, sql } from "../kernel/sql";

/** What the Run page and the dashboard's answers read of one Run, each by its primary key. */

/**
 * The Run (the columns the page shows), its Item, its Event and its approval. The Item's
 * (`item_`), the Event's (`e_`) and the approval's columns are null when the Run has none;
 * their types are those they have when it does (`item_title`, `e_id`, `approved_by` tell).
 */
export interface RunDetailRow {
  /** why a writer reviews the Run's commits before they are pushed (ADR 0058); null: pushed as made */
  review_reason: ReviewReason | null;
  id: string;
  loop: string;
  repo: string;
  item_key: string;
  number: number | null;
  state: RunStateName;
  cancel_reason: string | null;
  superseded_by: string | null;
  waiting_reason: string | null;
  agent: string;
  model: string | null;
  prompt: string;
  approval_required: boolean;
  received_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  updated_at: Date;
  branch: string | null;
  pull_request_number: number | null;
  resolved_failure_attempt_id: string | null;
  item_title: string | null;
  item_kind: string;
  item_state: string;
  item_labels: string[];
  e_id: string | null;
  e_kind: string;
  e_status: string;
  e_reason: string | null;
  e_received_at: Date;
  e_generation: number;
  e_content_hash: string | null;
  e_submission: Submission | null;
  approved_by: string | null;
  approved_at: Date;
}

export async function readRunDetail(db: Db, runId: string): Promise<RunDetailRow | undefined> {
  return first<RunDetailRow>(
    db.pool,
    sql`SELECT r.*, r.state::text AS state,
              i.title AS item_title, i.kind AS item_kind, i.state AS item_state, i.labels AS item_labels,
              e.id AS e_id, e.kind AS e_kind, e.status::text AS e_status, e.reason AS e_reason, e.received_at AS e_received_at,
              e.generation AS e_generation, e.content_hash AS e_content_hash, e.submission AS e_submission,
              ap.approved_by, ap.at AS approved_at
         FROM runs r
         LEFT JOIN items i ON i.key = r.item_key
         LEFT JOIN events e ON e.id = r.event_id
         LEFT JOIN approvals ap ON ap.run_id = r.id
        WHERE r.id = ${runId}`,
  );
}

export interface RunAttemptRow {
  id: string;
  number: number;
  step: string;
  state: string;
  started_at: Date;
  ended_at: Date | null;
  failure_kind: string | null;
  failure_category: string | null;
  retryable: boolean | null;
  failure_message: string | null;
  summary: string | null;
  duration_ms: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  /** numeric, as text (no float rounding) */
  cost_usd: string | null;
  agent: string | null;
  cost_exact: boolean;
  cost_estimated: boolean;
  model: string | null;
  turns: number | null;
  session_id: string | null;
  resumed_session: string | null;
  /** lib/executor/verify-spec.ts VerifyResult, as stored; null: no verify ran */
  verify: unknown;
  /** when retention cut its transcript to the last lines */
  transcript_pruned_at: Date | null;
}

/** The Run's Attempts, in order. */
export async function readRunAttempts(db: Db, runId: string): Promise<RunAttemptRow[]> {
  return rows<RunAttemptRow>(
    db.pool,
    sql`SELECT id, number, step, state::text AS state, started_at, ended_at, failure_kind, failure_category, retryable,
              failure_message, summary, duration_ms, tokens_in, tokens_out, cost_usd::text AS cost_usd, agent,
              cost_exact, cost_estimated, model, turns, session_id, resumed_session, verify, transcript_pruned_at
         FROM attempts WHERE run_id = ${runId} ORDER BY number, step`,
  );
}

/** The Run's state and pull request (what an action's answer says of it), undefined when there is no such Run. */
export async function readRunSummary(db: Db, runId: string): Promise<{ id: string; state: RunStateName; pull_request_number: number | null } | undefined> {
  return first(db.pool, sql`SELECT id, state::text AS state, pull_request_number FROM runs WHERE id = ${runId}`);
}

/** The repositories of these Runs (those that exist). */
export async function reposOfRuns(db: Db, runIds: readonly string[]): Promise<string[]> {
  if (!runIds.length) return [];
  return (await rows<{ repo: string }>(db.pool, sql`SELECT DISTINCT repo FROM runs WHERE id = ANY(${runIds}::text[])`)).map((r) => r.repo);
}

/** The repository of a Run (what its authorization asks), undefined when there is no such Run. */
export async function repoOfRun(db: Db, runId: string): Promise<{ repo: string; repositoryId: string | null } | undefined> {
  return first<{ repo: string; repositoryId: string | null }>(db.pool, sql`SELECT repo, repository_id::text AS "repositoryId" FROM runs WHERE id = ${runId}`);
}
