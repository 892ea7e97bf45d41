import type { ReviewReason } from "../../loops/steering";
import type { RunStateName } from "../../engine/run-state";
import type { Db } from "../kernel/db";
import type { ApprovalReason } from "../runs/claim";
import { first, sql } from "../kernel/sql";

/**
 * What the mirror shows of one Run (lib/mirror/run-snapshot.ts), read in one statement: the
 * Run, its Item, its latest Attempt, the totals of its Attempts, and where its repository is
 * installed.
 */
export interface MirrorSnapshotRow {
  id: string;
  loop: string;
  repo: string;
  number: number | null;
  item_kind: string | null;
  item_head_sha: string | null;
  state: RunStateName;
  cancel_reason: string | null;
  waiting_reason: string | null;
  pull_request_number: number | null;
  head_sha: string | null;
  started_at: Date | null;
  ended_at: Date | null;
  version: string;
  attempt_number: number | null;
  attempt_state: "Running" | "Succeeded" | "Failed" | "Canceled" | null;
  failure_kind: string | null;
  failure_category: string | null;
  failure_message: string | null;
  duration_ms: string | number | null;
  cost_usd: string | null;
  cost_estimated: boolean | null;
  cost_exact: boolean | null;
  model: string | null;
  turns: string | number | null;
  installation_id: number | null;
  config: unknown;
  prompt: string;
  approval_reason: ApprovalReason | null;
  /** the latest Attempt's verify, as stored */
  attempt_verify: unknown;
  review_reason: ReviewReason | null;
}

/** The Run's snapshot row; undefined when there is no such Run. */
export async function readMirrorSnapshotRow(db: Db, runId: string): Promise<MirrorSnapshotRow | undefined> {
  return first<MirrorSnapshotRow>(
    db.pool,
    sql`SELECT r.id, r.loop, r.repo, r.number, i.kind AS item_kind, i.head_sha AS item_head_sha, r.state, r.cancel_reason,
           r.waiting_reason, r.pull_request_number, r.head_sha, r.started_at AT TIME ZONE current_setting('TimeZone') AS started_at,
           r.ended_at AT TIME ZONE current_setting('TimeZone') AS ended_at, r.updated_at::text AS version,
           la.number AS attempt_number, la.state AS attempt_state, la.failure_kind, la.failure_category, la.failure_message, la.model,
           tot.duration_ms, tot.cost_usd, tot.cost_estimated, tot.cost_exact, tot.turns, rp.installation_id, rp.config,
           r.prompt, e.submission->'approvalReason' AS approval_reason, la.verify AS attempt_verify, r.review_reason
      FROM runs r
      LEFT JOIN events e ON e.id = r.event_id
      LEFT JOIN items i ON i.key = r.item_key
      LEFT JOIN repositories rp ON rp.full_name = r.repo
      LEFT JOIN LATERAL (
        SELECT number, state, failure_kind, failure_category, failure_message, model, verify
          FROM attempts WHERE run_id = r.id ORDER BY number DESC LIMIT 1) la ON true
      LEFT JOIN LATERAL (
        SELECT sum(duration_ms) AS duration_ms, sum(cost_usd)::text AS cost_usd, bool_or(cost_estimated) AS cost_estimated,
               bool_and(cost_exact) FILTER (WHERE cost_usd IS NOT NULL) AS cost_exact, sum(turns) AS turns
          FROM attempts WHERE run_id = r.id) tot ON true
     WHERE r.id = ${runId}`,
  );
}
