import type { ItemProjection } from "./projection";
import { isFailedCheck } from "./pull-feedback";
import { localIso } from "./schedule";

/**
 * The `item` an expression sees. For issues and pull requests it is built from the stored
 * Projection; for a schedule Loop the Item is the Tick. Field names are the snake_case that
 * GitHub users know from `github.event` and Actions expressions.
 */
export interface ItemContext {
  kind: "issue" | "pull_request";
  number: number;
  title: string;
  body: string;
  state: "open" | "closed" | "merged";
  labels: { name: string }[];
  author: string | null;
  draft: boolean;
  head_sha: string | null;
  head_ref: string | null;
  base_ref: string | null;
  mergeable: boolean | null;
  merged: boolean;
  url: string;
  /** GitHub's author_association of the Item (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE…); null when unknown */
  author_association: string | null;
  /** Who caused the match (ADR 0009); null when unknown */
  actor: string | null;
  /** The actor's role on the repository: none, read, triage, write, maintain or admin; null when unknown */
  actor_permission: string | null;
  /** A pull request's reviews, oldest first (empty for an issue) */
  reviews: { author: string | null; state: string; body: string }[];
  /** A pull request's review threads: where, whether resolved, and each comment */
  review_threads: { path: string; line: number | null; resolved: boolean; outdated: boolean; comments: { author: string | null; body: string }[] }[];
  /** The checks of a pull request's head commit (other Apps' completed check runs and commit statuses), by name */
  checks: { name: string; conclusion: string; failed: boolean; title: string | null; summary: string | null }[];
}

/** What an Event knows of who caused it, for the `item` context. */
export interface ActorContext {
  authorAssociation: string | null;
  login: string | null;
  permission: string | null;
}

export interface TickContext {
  kind: "tick";
  tick: {
    /** ISO UTC instant, e.g. "2026-03-30T04:00:00.000Z". */
    scheduledAt: string;
    /** ISO wall time in the Loop's time zone with its offset, e.g. "2026-03-30T06:00:00+02:00". */
    scheduledAtLocal: string;
    cron: string;
    tz: string;
  };
}

/** The `item` context of an issue or pull request. */
export function buildItemContext(projection: ItemProjection, actor: ActorContext | null = null): ItemContext {
  return {
    kind: projection.kind,
    number: projection.number,
    title: projection.title,
    body: projection.body,
    state: projection.state,
    labels: projection.labels.map((name) => ({ name })),
    author: projection.author,
    draft: projection.draft,
    head_sha: projection.headRefOid,
    head_ref: projection.headRefName,
    base_ref: projection.baseRefName,
    mergeable: projection.mergeable,
    merged: projection.merged,
    url: projection.url,
    author_association: actor?.authorAssociation ?? null,
    actor: actor?.login ?? null,
    actor_permission: actor?.permission ?? null,
    reviews: (projection.reviews ?? []).map((r) => ({ ...r })),
    review_threads: (projection.reviewThreads ?? []).map((t) => ({ ...t, comments: t.comments.map((c) => ({ ...c })) })),
    checks: (projection.checks ?? []).map((c) => ({ name: c.name, conclusion: c.conclusion, failed: isFailedCheck(c), title: c.title, summary: c.summary })),
  };
}

/** The `item` context of a schedule Loop's Tick. */
export function buildTickContext(tick: { scheduledAt: Date; cron: string; tz: string }): TickContext {
  return {
    kind: "tick",
    tick: {
      scheduledAt: tick.scheduledAt.toISOString(),
      scheduledAtLocal: localIso(tick.scheduledAt, tick.tz),
      cron: tick.cron,
      tz: tick.tz,
    },
  };
}
