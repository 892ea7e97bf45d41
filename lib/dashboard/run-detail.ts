import type { RunStateName } from "../engine/run-state";
import { isClosed } from "../engine/run-predicates";
import { runEnding } from "../engine/run-ending";
import { NotFoundError } from "../errors";
import { auditOfRun, type AuditRow } from "../store/reads/audit-page";
import type { Db } from "../store/kernel/db";
import type { EventActor, Submission } from "../store/runs/claim";
import { approvalSentence } from "../triggers/actor";
import { pushSentence, reviewSentence } from "../loops/steering";
import { readHeldCommits, type HeldCommits } from "../store/runs/held-commits";
import { issueUrl, pullRequestUrl } from "./links";
import { WORKER_STALE_AFTER_MS } from "../runner/worker-heartbeat";
import { readRunAttempts, readRunDetail, readRunSummary, type RunAttemptRow } from "../store/reads/run-detail-read";
import { anyWorkerAlive } from "../store/runs/worker-registry";
import { availableActions, hasUnresolvedFailure, waitsFor, type RunAction } from "./run-status";
import { storedVerify, verifyVerdict, type VerifyResult, type VerifyVerdict } from "../executor/verify-spec";

/** Everything the Run page shows, from three indexed reads (lib/store/reads/run-detail-read.ts, lib/store/reads/audit-page.ts). */
export interface RunDetail {
  id: string;
  loop: string;
  repo: string;
  itemKey: string;
  number: number | null;
  state: RunStateName;
  /**
   * How it ended (lib/engine/run-ending.ts): `closed` is the terminal set (Succeeded, Failed,
   * Canceled); `category` why a closed Run did not succeed (its last failure's, or `canceled`)
   * and `retryable` whether Atelier retries that by itself; both null while open or when Succeeded.
   */
  closed: boolean;
  category: string | null;
  retryable: boolean | null;
  cancelReason: string | null;
  supersededBy: string | null;
  waitsFor: string | null;
  agent: string;
  /** The model the Loop picked for the agent; null: the agent's default. */
  model: string | null;
  prompt: string;
  approvalRequired: boolean;
  receivedAt: string;
  startedAt: string | null;
  /** From the trigger (the Event's reception) to the agent's first start (docs/insights.md); null until it started. */
  triggerToStartMs: number | null;
  endedAt: string | null;
  updatedAt: string;
  branch: string | null;
  pullRequestNumber: number | null;
  pullRequestUrl: string | null;
  unresolvedFailure: boolean;
  item: { title: string; kind: string; state: string; labels: string[]; url: string } | null;
  event: {
    id: string;
    kind: string;
    status: string;
    reason: string | null;
    receivedAt: string;
    generation: number;
    contentHash: string | null;
    /** who caused the match, with their role then; null for a Tick (or an Event recorded before actors were) */
    actor: EventActor | null;
    /** the repository whose config declares the Loop */
    declaredIn: string;
    /** how many Runs led to the Item */
    chainDepth: number;
    /** what Needs you says while the Run waits for approval */
    approvalSentence: string | null;
  } | null;
  approval: { approvedBy: string; at: string } | null;
  attempts: AttemptView[];
  /**
   * When Succeeded, how Atelier checked the agent's work (its latest Attempt's verify): passed,
   * failed (the pull request is a draft) or not_declared; null otherwise.
   */
  verify: VerifyVerdict | null;
  audit: AuditView[];
  /** The actions the state allows (the viewer's permission is checked apart). */
  actions: RunAction[];
  /**
   * When the agent's commits reach a branch, where CI runs them with the repository's secrets
   * (ADR 0058): `why` a writer reviews them first (null: they are pushed as made), said as a sentence.
   */
  push: { reviewed: boolean; sentence: string; why: string | null };
  /** The commits a Reviewing Run holds, as the writer reads them before Push; null when it holds none. */
  held: HeldCommits | null;
}

export interface AttemptView {
  id: string;
  number: number;
  step: string;
  state: string;
  startedAt: string;
  endedAt: string | null;
  failureKind: string | null;
  failureCategory: string | null;
  retryable: boolean | null;
  failureMessage: string | null;
  summary: string | null;
  durationMs: number | null;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: string | null;
  /** The cost is the agent's own report (not an estimate). */
  costExact: boolean;
  costEstimated: boolean;
  /** What the agent reported: the model that ran and its turns. */
  model: string | null;
  turns: number | null;
  /** The session a retry resumes. */
  sessionId: string | null;
  /** Its worker died, lost its lease, or was drained (ADR 0082/0083): the next Attempt resumes its kept session. */
  interrupted: boolean;
  /** The kept session this Attempt resumed (an interrupted Attempt's, or a retried one's); null: a new conversation. */
  resumedSession: string | null;
  /** It resumed the session of the interrupted Attempt before it. */
  resumedInterrupted: boolean;
  agent: string | null;
  /** What verify found on the Attempt's commit; null: none ran. */
  verify: VerifyResult | null;
  /** When retention cut its transcript to its summary, usage and last lines (lib/retention); null: whole. */
  transcriptPrunedAt: string | null;
}

export interface AuditView {
  id: string;
  at: string;
  actor: string;
  action: string;
  repo: string | null;
  runId: string | null;
  detail: unknown;
}

/** An Attempt closed because its worker stopped holding it (died, lost its lease, drained): lease_lost, whoever closed it. */
const isInterrupted = (a: RunAttemptRow): boolean => a.state === "Failed" && a.failure_category === "lease_lost";

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export async function loadRunDetail(db: Db, runId: string, opts: { canIntervene?: (agent: string) => boolean } = {}): Promise<RunDetail> {
  const [r, attempts, audit, held] = await Promise.all([readRunDetail(db, runId), readRunAttempts(db, runId), auditOfRun(db, runId, 200), readHeldCommits(db, runId)]);
  if (!r) throw new NotFoundError("run_not_found", `There is no Run ${runId}.`);

  const attemptViews: AttemptView[] = attempts.map((a, i) => ({
    id: a.id,
    number: a.number,
    step: a.step,
    state: a.state,
    startedAt: a.started_at.toISOString(),
    endedAt: iso(a.ended_at),
    failureKind: a.failure_kind,
    failureCategory: a.failure_category,
    retryable: a.retryable,
    failureMessage: a.failure_message,
    summary: a.summary,
    transcriptPrunedAt: iso(a.transcript_pruned_at),
    durationMs: a.duration_ms,
    tokensIn: a.tokens_in,
    tokensOut: a.tokens_out,
    costUsd: a.cost_usd,
    costExact: a.cost_exact,
    costEstimated: a.cost_estimated,
    model: a.model,
    turns: a.turns,
    sessionId: a.session_id,
    interrupted: isInterrupted(a),
    resumedSession: a.resumed_session,
    resumedInterrupted: a.resumed_session !== null && i > 0 && isInterrupted(attempts[i - 1]!),
    agent: a.agent,
    verify: storedVerify(a.verify),
  }));
  const latest = attemptViews.at(-1) ?? null;
  const latestFailed = [...attemptViews].reverse().find((a) => a.state === "Failed") ?? null;
  const facts = {
    state: r.state,
    waitingReason: r.waiting_reason,
    pullRequestNumber: r.pull_request_number,
    latestAttempt: latest ? { id: latest.id, state: latest.state, number: latest.number } : null,
    latestFailedAttemptId: latestFailed?.id ?? null,
    resolvedFailureAttemptId: r.resolved_failure_attempt_id,
    workerRunning: r.state === "Queued" ? await anyWorkerAlive(db, WORKER_STALE_AFTER_MS) : true,
  };

  return {
    id: r.id,
    loop: r.loop,
    repo: r.repo,
    itemKey: r.item_key,
    number: r.number,
    state: facts.state,
    ...runEnding(r.state, latestFailed ? { category: latestFailed.failureCategory, retryable: latestFailed.retryable } : null),
    cancelReason: r.cancel_reason,
    supersededBy: r.superseded_by,
    waitsFor: waitsFor(facts),
    agent: r.agent,
    model: r.model ?? null,
    prompt: r.prompt,
    approvalRequired: r.approval_required,
    receivedAt: r.received_at.toISOString(),
    startedAt: iso(r.started_at),
    triggerToStartMs: r.started_at ? Math.max(0, r.started_at.getTime() - r.received_at.getTime()) : null,
    endedAt: iso(r.ended_at),
    updatedAt: r.updated_at.toISOString(),
    branch: r.branch,
    pullRequestNumber: r.pull_request_number,
    pullRequestUrl: r.pull_request_number ? pullRequestUrl(r.repo, r.pull_request_number) : null,
    unresolvedFailure: hasUnresolvedFailure(facts),
    item:
      r.item_title !== null && r.number !== null
        ? { title: r.item_title, kind: r.item_kind, state: r.item_state, labels: r.item_labels, url: issueUrl(r.repo, r.number, r.item_kind) }
        : null,
    event: r.e_id
      ? {
          id: r.e_id,
          kind: r.e_kind,
          status: r.e_status,
          reason: r.e_reason,
          receivedAt: r.e_received_at.toISOString(),
          generation: r.e_generation,
          contentHash: r.e_content_hash,
          ...eventFacts(r.loop, r.repo, r.approval_required, (r.e_submission ?? {}) as Submission),
        }
      : null,
    approval: r.approved_by ? { approvedBy: r.approved_by, at: r.approved_at.toISOString() } : null,
    attempts: attemptViews,
    verify: r.state === "Succeeded" ? verifyVerdict(latest?.verify ?? null) : null,
    audit: audit.map(toAuditView),
    actions: availableActions(facts, opts.canIntervene?.(r.agent) ?? false),
    push: { reviewed: r.review_reason !== null, sentence: pushSentence(r.review_reason), why: r.review_reason ? reviewSentence(r.review_reason) : null },
    held,
  };
}

/** What the Event's submission says of who started the Run and where it was declared. */
function eventFacts(loop: string, repo: string, approvalRequired: boolean, s: Submission) {
  return {
    actor: s.actor ?? null,
    declaredIn: s.declaredIn ?? repo,
    chainDepth: s.chainDepth ?? 0,
    approvalSentence: approvalRequired ? approvalSentence(loop, s.approvalReason) : null,
  };
}

export function toAuditView(a: AuditRow): AuditView {
  return { ...a, at: a.at.toISOString() };
}

/** The Run's state and PR after an action, for the API's answer. */
export async function runSummary(db: Db, runId: string): Promise<{ id: string; state: RunStateName; closed: boolean; pullRequestNumber: number | null }> {
  const run = await readRunSummary(db, runId);
  if (!run) throw new NotFoundError("run_not_found", `There is no Run ${runId}.`);
  return { id: run.id, state: run.state, closed: isClosed(run.state), pullRequestNumber: run.pull_request_number };
}
