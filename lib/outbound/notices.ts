import { z } from "zod";

/**
 * Notices: what a target (a signed webhook or a Slack channel) may be subscribed to besides a
 * webhook's terminal states — each is something a person should act on or know of, found by
 * the outbound worker from Postgres's facts (lib/store/outbound/notice-rows.ts) and delivered
 * once per target and subject (ADR 0087).
 */
export const NOTICE_KINDS = ["needs_approval", "failed", "budget_ask", "quota_refusal", "config_error", "verify_failed", "pull_request_opened"] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

export const noticeKinds = z.array(z.enum(NOTICE_KINDS)).max(NOTICE_KINDS.length);

/** What people call each notice (the delivery log, the Slack message's header). */
export const NOTICE_TITLES: Record<NoticeKind | "test", string> = {
  needs_approval: "Needs approval",
  failed: "Run failed",
  budget_ask: "Cycle budget used up",
  quota_refusal: "Refused by a quota",
  config_error: "Config error",
  verify_failed: "Verify failed",
  pull_request_opened: "Pull request opened",
  test: "Test delivery",
};

/** One notice, as the worker found it. */
export interface Notice {
  kind: NoticeKind;
  /** delivered once per target and subject: `<kind>:<what it is about>` */
  subject: string;
  /** when it happened: a target hears only of what happened after it was made */
  at: Date;
  repo: string;
  installationId: number | null;
  /** null: every Loop of the repository (a repository's config error) */
  loop: string | null;
  number: number | null;
  title: string | null;
  runId: string | null;
  /** a sentence: why it needs a person, or what happened */
  reason: string;
}

/** What a delivery of a notice carries (and a webhook target receives, signed). */
export interface NoticePayload {
  event: `notice.${NoticeKind | "test"}`;
  occurred_at: string;
  installation: { id: number } | null;
  notice: {
    kind: NoticeKind | "test";
    subject: string;
    reason: string;
    repo: string | null;
    loop: string | null;
    number: number | null;
    title: string | null;
    run_id: string | null;
    links: { run: string | null; approve: string | null; needs_you: string };
  };
}

const base = (publicUrl: string): string => publicUrl.replace(/\/+$/, "");

export function noticePayload(n: Notice, publicUrl: string): NoticePayload {
  const run = n.runId ? `${base(publicUrl)}/runs/${n.runId}` : null;
  return {
    event: `notice.${n.kind}`,
    occurred_at: n.at.toISOString(),
    installation: n.installationId === null ? null : { id: n.installationId },
    notice: {
      kind: n.kind,
      subject: n.subject,
      reason: n.reason,
      repo: n.repo,
      loop: n.loop,
      number: n.number,
      title: n.title,
      run_id: n.runId,
      links: { run, approve: n.kind === "needs_approval" && run ? `${run}#actions` : null, needs_you: `${base(publicUrl)}/needs-you` },
    },
  };
}

/** The test delivery's payload: a notice about nothing, that says so. */
export function testPayload(subject: string, publicUrl: string, installationId: number | null, at: Date = new Date()): NoticePayload {
  return {
    event: "notice.test",
    occurred_at: at.toISOString(),
    installation: installationId === null ? null : { id: installationId },
    notice: {
      kind: "test",
      subject,
      reason: "A test delivery from Atelier: this target is reachable. Nothing needs you.",
      repo: null,
      loop: null,
      number: null,
      title: null,
      run_id: null,
      links: { run: null, approve: null, needs_you: `${base(publicUrl)}/needs-you` },
    },
  };
}

/** Whether the payload of a delivery is a notice's (not a terminal state's). */
export const isNoticePayload = (p: { event: string }): p is NoticePayload => p.event.startsWith("notice.");

/** A target, as the matching reads it: its owner and what it is subscribed to. */
export interface NoticeTarget {
  id: number;
  installationId: number | null;
  repo: string | null;
  loop: string | null;
  events: readonly string[];
  createdAt: Date;
}

/**
 * Whether the target hears of the notice: subscribed to its kind, made before it happened, and
 * owning it — the instance's every notice, an installation's of its repositories, a Loop's of
 * that Loop (and its repository's config errors, which stop every Loop).
 */
export function targetHears(t: NoticeTarget, n: Notice): boolean {
  if (!t.events.includes(n.kind) || n.at < t.createdAt) return false;
  if (t.repo !== null) return t.repo === n.repo && (n.loop === null || n.loop === t.loop);
  if (t.installationId !== null) return t.installationId === n.installationId;
  return true;
}
