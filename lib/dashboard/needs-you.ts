import { countQuotaRefusals, listQuotaRefusals } from "../metering/quota-refusals";
import type { Db } from "../store/kernel/db";
import { ENGINE_FAILURES_BEFORE_PARKING } from "../store/runs/engine-failures";
import {
  countNeedRows,
  listAwaitingApproval,
  listAwaitingReview,
  listBudgetAsks,
  listEngineParked,
  listLoopErrors,
  listRepositoryErrors,
  listUnresolvedFailures,
  NEEDS_LIMIT,
  type NeedRunRow,
} from "../store/reads/needs-you-lists";
import { approvalSentence } from "../triggers/actor";
import { reviewSentence } from "../loops/steering";
import { configFileUrl } from "./links";

/**
 * Needs you: everything waiting on a person in the repositories in scope, newest first —
 * approvals, failed Runs nobody resolved, Runs parked by engine failures, cycle budget asks,
 * config errors (the repository's file or one Loop), poll failures and quota refusals. Each
 * entry names its action.
 */

export type NeedKind = "approval" | "review" | "failure" | "engine_failure" | "budget_ask" | "config_error" | "loop_error" | "poll_error" | "quota";

export interface Need {
  kind: NeedKind;
  /** Stable id for the list (React key, links). */
  id: string;
  at: string;
  repo: string;
  title: string;
  detail: string | null;
  runId: string | null;
  itemKey: string | null;
  number: number | null;
  loop: string | null;
  /** The action a person takes here. */
  action:
    | { kind: "approve"; runId: string }
    /** "Review and push": the Run page shows the diff beside Push and Discard */
    | { kind: "review_and_push"; runId: string }
    | { kind: "retry_or_resolve"; runId: string }
    | { kind: "retry_or_cancel"; runId: string }
    | { kind: "reset_budget"; itemKey: string }
    | { kind: "fix_config"; url: string }
    | { kind: "check_polling"; repo: string }
    | { kind: "review_quota"; repo: string };
}

export interface NeedsYou {
  needs: Need[];
  counts: Record<NeedKind, number>;
  total: number;
}

/** The count per kind, in one round trip (the navigation shows it on every page). */
export async function countNeeds(db: Db, repos: string[]): Promise<NeedsYou["counts"] & { total: number }> {
  const zero = { approval: 0, review: 0, failure: 0, engine_failure: 0, budget_ask: 0, config_error: 0, loop_error: 0, poll_error: 0, quota: 0, total: 0 };
  if (!repos.length) return zero;
  const quota = countQuotaRefusals(db, { repos });
  const row = await countNeedRows(db, repos);
  const counts = {
    approval: Number(row.waiting) - Number(row.engine_failure),
    review: Number(row.review),
    failure: Number(row.failure),
    engine_failure: Number(row.engine_failure),
    budget_ask: Number(row.budget_ask),
    config_error: Number(row.config_error),
    loop_error: Number(row.loop_error),
    poll_error: Number(row.poll_error),
    quota: await quota,
  };
  return { ...counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
}

/** What an entry about one Run says of it: when, where, which Item, which Loop. */
const aboutRun = (r: NeedRunRow) => ({
  at: r.updated_at.toISOString(),
  repo: r.repo,
  title: r.title ?? `${r.repo}#${r.number ?? "?"}`,
  runId: r.id,
  itemKey: r.item_key,
  number: r.number,
  loop: r.loop,
});

/** What a Run parked by engine failures says: Atelier failed it, not the agent. */
const engineFailureSentence = (error: string, times: number) =>
  `Atelier failed moving this Run ${times} times (an engine failure, not the agent's); the last error: ${error}. Retry once it is fixed, or cancel.`;

export async function loadNeedsYou(db: Db, repos: string[]): Promise<NeedsYou> {
  if (!repos.length) {
    const { total, ...byKind } = await countNeeds(db, repos);
    return { needs: [], counts: byKind, total };
  }
  // the counts and the lists at once, each on a connection of its own
  const [{ total, ...byKind }, approvals, reviews, failures, parked, asks, repoErrors, loopErrors, refusals] = await Promise.all([
    countNeeds(db, repos),
    listAwaitingApproval(db, repos),
    listAwaitingReview(db, repos),
    listUnresolvedFailures(db, repos),
    listEngineParked(db, repos),
    listBudgetAsks(db, repos),
    listRepositoryErrors(db, repos),
    listLoopErrors(db, repos),
    listQuotaRefusals(db, { repos, limit: NEEDS_LIMIT }),
  ]);

  const needs: Need[] = [];
  for (const r of approvals) {
    needs.push({
      kind: "approval",
      id: `approval:${r.id}`,
      ...aboutRun(r),
      detail: approvalSentence(r.loop, r.approval_reason),
      action: { kind: "approve", runId: r.id },
    });
  }
  for (const r of reviews) {
    needs.push({
      kind: "review",
      id: `review:${r.id}`,
      ...aboutRun(r),
      detail: `Review and push: the agent's commits wait, off every branch, for a writer to read the diff and push or discard them.${r.review_reason ? ` ${reviewSentence(r.review_reason)}` : ""}`,
      action: { kind: "review_and_push", runId: r.id },
    });
  }
  for (const r of failures) {
    const kind = [r.failure_kind, r.failure_category].filter(Boolean).join(" · ");
    needs.push({
      kind: "failure",
      id: `failure:${r.id}`,
      ...aboutRun(r),
      detail: r.engine_error && r.engine_failures >= ENGINE_FAILURES_BEFORE_PARKING ? engineFailureSentence(r.engine_error, r.engine_failures) : [kind, r.failure_message].filter(Boolean).join(": ") || "The Run failed.",
      action: { kind: "retry_or_resolve", runId: r.id },
    });
  }
  for (const r of parked) {
    needs.push({
      kind: "engine_failure",
      id: `engine:${r.id}`,
      ...aboutRun(r),
      detail: engineFailureSentence(r.engine_error ?? "unknown", r.engine_failures),
      action: { kind: "retry_or_cancel", runId: r.id },
    });
  }
  for (const r of asks) {
    const ask = r.ask ?? {};
    needs.push({
      kind: "budget_ask",
      id: `budget:${r.item_key}`,
      at: (r.asked_at ?? new Date(0)).toISOString(),
      repo: r.repo,
      title: r.title ?? r.item_key,
      detail: `This Item used its cycle budget${ask.maxCycles ? ` (${ask.maxCycles} Runs)` : ""}${ask.loop ? ` on the Loop ${ask.loop}` : ""}; no Loop opens another Run on it until you reset the budget.`,
      runId: null,
      itemKey: r.item_key,
      number: r.number ?? null,
      loop: ask.loop ?? null,
      action: { kind: "reset_budget", itemKey: r.item_key },
    });
  }
  for (const r of repoErrors) {
    if (r.config_error) {
      needs.push({
        kind: "config_error",
        id: `config:${r.full_name}`,
        at: r.updated_at.toISOString(),
        repo: r.full_name,
        title: `.github/atelier.yml of ${r.full_name}`,
        detail: r.config_error,
        runId: null,
        itemKey: null,
        number: null,
        loop: null,
        action: { kind: "fix_config", url: configFileUrl(r.full_name, r.default_branch) },
      });
    }
    if (r.poll_error) {
      needs.push({
        kind: "poll_error",
        id: `poll:${r.full_name}`,
        at: (r.poll_error_at ?? r.updated_at).toISOString(),
        repo: r.full_name,
        title: `Polling ${r.full_name} fails`,
        detail: r.poll_error,
        runId: null,
        itemKey: null,
        number: null,
        loop: null,
        action: { kind: "check_polling", repo: r.full_name },
      });
    }
  }
  for (const r of loopErrors) {
    needs.push({
      kind: "loop_error",
      id: `loop:${r.repo}:${r.loop}`,
      at: r.updated_at.toISOString(),
      repo: r.repo,
      title: `Loop ${r.loop} of ${r.repo}`,
      detail: r.error_line ? `line ${r.error_line}: ${r.error}` : r.error,
      runId: null,
      itemKey: null,
      number: null,
      loop: r.loop,
      action: { kind: "fix_config", url: configFileUrl(r.repo, r.default_branch ?? "main") },
    });
  }
  for (const r of refusals) {
    needs.push({
      kind: "quota",
      id: `quota:${r.eventId}`,
      at: r.at.toISOString(),
      repo: r.repo,
      title: r.number === null ? `${r.repo} (schedule)` : `${r.repo}#${r.number}`,
      detail: `${r.token}: ${r.message}`,
      runId: r.runId,
      itemKey: r.itemKey,
      number: r.number,
      loop: r.loop,
      action: { kind: "review_quota", repo: r.repo },
    });
  }
  needs.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.id.localeCompare(b.id)));
  return { needs, counts: byKind, total };
}
