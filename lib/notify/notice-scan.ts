import { listQuotaRefusals } from "../metering/quota-refusals";
import { noticePayload, targetHears, type Notice } from "../outbound/notices";
import type { Db } from "../store/kernel/db";
import {
  budgetAskNoticeRows,
  configErrorNoticeRows,
  insertNoticeDeliveries,
  noticeTargets,
  runNoticeRows,
  sweptRunIds,
  type NoticeDeliveryRow,
  type RunNoticeRow,
} from "../store/outbound/notice-rows";
import { approvalSentence } from "../triggers/actor";
import type { ApprovalReason } from "../store/runs/claim";

/**
 * Finds the notices the subscribed targets should hear of and writes their deliveries, once per
 * target and subject (ADR 0087). The outbound worker calls it with the Runs a change
 * notification named (a Run waiting for approval, failed, verify failed, its pull request
 * opened), and from its sweep with the standing ones (every Waiting and unresolved failed Run of
 * late, the Attempts that ended in the last hour, the budget asks, quota refusals and config
 * errors that wait now). Nothing is read when no target is subscribed to any notice.
 */

export interface NoticeScanDeps {
  db: Db;
  /** where the Run pages are (ATELIER_PUBLIC_URL) */
  publicUrl: string;
}

/** The Run's notices, from its row: each kind it is in now. */
export function runNotices(r: RunNoticeRow): Notice[] {
  const about = { repo: r.repo, installationId: r.installation_id, loop: r.loop, number: r.number, title: r.title, runId: r.id };
  const found: Notice[] = [];
  if (r.state === "Waiting" && r.waiting_reason === "approval") {
    found.push({ kind: "needs_approval", subject: `needs_approval:${r.id}`, at: r.updated_at, reason: approvalSentence(r.loop, r.approval_reason as ApprovalReason | null), ...about });
  }
  if (r.state === "Failed") {
    const kind = [r.failure_kind, r.failure_category].filter(Boolean).join(" · ");
    const reason = [kind, r.failure_message ?? r.engine_error].filter(Boolean).join(": ") || "The Run failed.";
    found.push({ kind: "failed", subject: `failed:${r.id}:${r.failed_attempt_id ?? "run"}`, at: r.ended_at ?? r.updated_at, reason, ...about });
  }
  if (r.verify_attempt_id) {
    const command = r.verify_command ? `\`${r.verify_command}\`` : "verify";
    const exit = r.verify_exit_code === null ? "was stopped" : `exited with ${r.verify_exit_code}`;
    found.push({
      kind: "verify_failed",
      subject: `verify_failed:${r.verify_attempt_id}`,
      at: r.verify_ended_at ?? r.updated_at,
      reason: `The agent finished, but ${command} ${exit} on its commit.`,
      ...about,
    });
  }
  if (r.pull_request_number !== null) {
    found.push({
      kind: "pull_request_opened",
      subject: `pull_request_opened:${r.id}:${r.pull_request_number}`,
      at: r.updated_at,
      reason: `The Loop ${r.loop} opened pull request #${r.pull_request_number}.`,
      ...about,
    });
  }
  return found;
}

/** The notices that wait now and are about no one Run: budget asks, quota refusals, config errors. */
async function standingNotices(db: Db): Promise<Notice[]> {
  const [asks, refusals, configs] = await Promise.all([budgetAskNoticeRows(db), listQuotaRefusals(db, { limit: 200 }), configErrorNoticeRows(db)]);
  const installations = new Map([...asks, ...configs].map((r) => [r.repo, r.installation_id]));
  return [
    ...asks.map(
      (b): Notice => ({
        kind: "budget_ask",
        subject: `budget_ask:${b.item_key}:${b.generation}`,
        at: b.asked_at,
        repo: b.repo,
        installationId: b.installation_id,
        loop: b.ask?.loop ?? null,
        number: b.number,
        title: b.title,
        runId: null,
        reason: `This Item used its cycle budget${b.ask?.maxCycles ? ` (${b.ask.maxCycles} Runs)` : ""}; no Loop opens another Run on it until a writer resets the budget.`,
      }),
    ),
    ...refusals.map(
      (q): Notice => ({
        kind: "quota_refusal",
        subject: `quota_refusal:${q.eventId}:${q.token}`,
        at: q.at,
        repo: q.repo,
        installationId: installations.get(q.repo) ?? null,
        loop: q.loop,
        number: q.number,
        title: null,
        runId: q.runId,
        reason: q.message,
      }),
    ),
    ...configs.map(
      (c): Notice => ({
        kind: "config_error",
        subject: `config_error:${c.repository_id}:${c.loop ?? ""}:${c.error}`.slice(0, 500),
        at: c.updated_at,
        repo: c.repo,
        installationId: c.installation_id,
        loop: c.loop,
        number: null,
        title: c.loop ? `The Loop ${c.loop} of .github/atelier.yml` : ".github/atelier.yml",
        runId: null,
        reason: c.error,
      }),
    ),
  ];
}

/** Writes the deliveries of the notices to the targets that hear of them; returns the new ids. */
async function deliver(deps: NoticeScanDeps, notices: () => Promise<Notice[]>): Promise<number[]> {
  const targets = await noticeTargets(deps.db);
  if (!targets.length) return [];
  const found = await notices();
  const list: NoticeDeliveryRow[] = [];
  for (const n of found) {
    for (const t of targets) {
      const target = { id: t.id, installationId: t.installation_id, repo: t.repo, loop: t.loop, events: t.events, createdAt: t.created_at };
      if (targetHears(target, n)) list.push({ hookId: t.id, runId: n.runId, subject: n.subject, payload: noticePayload(n, deps.publicUrl) });
    }
  }
  return insertNoticeDeliveries(deps.db, list);
}

/** The notices of the Runs a change notification named. */
export function recordRunNotices(deps: NoticeScanDeps, runIds: readonly string[]): Promise<number[]> {
  return deliver(deps, async () => (await runNoticeRows(deps.db, runIds)).flatMap(runNotices));
}

/** The sweep's scan: the Runs of late and the standing notices. */
export function recordSweptNotices(deps: NoticeScanDeps): Promise<number[]> {
  return deliver(deps, async () => {
    const [runs, standing] = await Promise.all([sweptRunIds(deps.db).then((ids) => runNoticeRows(deps.db, ids)), standingNotices(deps.db)]);
    return [...runs.flatMap(runNotices), ...standing];
  });
}
