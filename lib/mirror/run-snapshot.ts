import type { ReviewReason } from "../loops/steering";
import type { ApprovalReason } from "../store/runs/claim";
import type { FailureCategory, FailureKind } from "../engine/failure";
import { isFailureCategory, isFailureKind } from "../engine/failure";
import type { RunStateName } from "../engine/run-state";
import type { ItemKind } from "../loops/projection";
import type { Db } from "../store/kernel/db";
import { storedVerify, type VerifyResult } from "../executor/verify-spec";
import { readMirrorSnapshotRow, type MirrorSnapshotRow } from "../store/github/mirror-snapshot";

/** The latest Attempt of a Run, as the mirror shows it. */
export interface AttemptSummary {
  number: number;
  state: "Running" | "Succeeded" | "Failed" | "Canceled";
  failure: { kind: FailureKind; category: FailureCategory; message: string } | null;
}

/**
 * Everything the mirror shows of one Run, read in one statement: the Run, its Item, its
 * latest Attempt, the totals of its Attempts, and where its repository is installed.
 */
export interface RunSnapshot {
  id: string;
  loop: string;
  /** owner/name, lower-cased */
  repo: string;
  /** The Item's number; null for a schedule Loop's Tick. */
  number: number | null;
  itemKind: ItemKind | null;
  /** The head of the pull request the Item is, as last observed. */
  itemHeadSha: string | null;
  state: RunStateName;
  /** OperatorCanceled | Superseded | Revoked, for a Canceled Run. */
  cancelReason: string | null;
  /** Why an unstarted Run waits: "approval", or a quota's refusal. */
  waitingReason: string | null;
  /** The pull request the Run opened or updated, and its head. */
  pullRequestNumber: number | null;
  headSha: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  /** The Run's version (`runs.updated_at` as text, exact): every change moves it; the sweep compares it with the mirror's. */
  version: string;
  latestAttempt: AttemptSummary | null;
  /** Sum of the Attempts' durations. */
  durationMs: number | null;
  /** Sum of the Attempts' costs, in USD; null when no Attempt reported one. */
  costUsd: number | null;
  costEstimated: boolean;
  /** Every cost the Attempts recorded is the agent's own report (false when none recorded one). */
  costExact: boolean;
  /** The model the latest Attempt's agent reported; null when it reported none. */
  model: string | null;
  /** Sum of the turns the agents reported; null when none did. */
  turns: number | null;
  installationId: number | null;
  /** The repository's parsed `.github/atelier.yml`, as last read. */
  repoConfig: unknown;
  /** The exact task text the agent gets: what an approver approves. */
  prompt: string;
  /** Why the Run waits for approval beyond the Loop's `approval: required` (its Event's). */
  approvalReason: ApprovalReason | null;
  /** What verify found on the latest Attempt's commit; null: none ran (none declared, or the agent did not finish). */
  verify: VerifyResult | null;
  /** Why a writer reviews the Run's commits before they are pushed; null: pushed as made, so CI runs them at once (ADR 0058). */
  reviewReason: ReviewReason | null;
}

function latestAttemptOf(row: MirrorSnapshotRow): AttemptSummary | null {
  if (row.attempt_number === null || row.attempt_state === null) return null;
  const kind = row.failure_kind;
  const category = row.failure_category;
  const failure =
    kind !== null && category !== null && isFailureKind(kind) && isFailureCategory(category)
      ? { kind, category, message: row.failure_message ?? "" }
      : null;
  return { number: row.attempt_number, state: row.attempt_state, failure };
}

/** Reads what the mirror shows of a Run; null when there is no such Run. */
export async function readRunSnapshot(db: Db, runId: string): Promise<RunSnapshot | null> {
  const row = await readMirrorSnapshotRow(db, runId);
  if (!row) return null;
  return {
    id: row.id,
    loop: row.loop,
    repo: row.repo,
    number: row.number,
    itemKind: row.item_kind === "pull_request" || row.item_kind === "issue" ? row.item_kind : null,
    itemHeadSha: row.item_head_sha,
    state: row.state,
    cancelReason: row.cancel_reason,
    waitingReason: row.waiting_reason,
    pullRequestNumber: row.pull_request_number,
    headSha: row.head_sha,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    version: row.version,
    latestAttempt: latestAttemptOf(row),
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    costEstimated: row.cost_estimated ?? false,
    costExact: row.cost_exact ?? false,
    model: row.model,
    turns: row.turns === null ? null : Number(row.turns),
    installationId: row.installation_id,
    repoConfig: row.config,
    prompt: row.prompt,
    approvalReason: row.approval_reason ?? null,
    verify: storedVerify(row.attempt_verify),
    reviewReason: row.review_reason ?? null,
  };
}
