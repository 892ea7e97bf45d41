import type { Db } from "../kernel/db";
import type { EventActor } from "./claim";
import type { ReviewReason } from "../../loops/steering";
import { first, raw, rows, sql } from "../kernel/sql";
import { isRequestSql } from "./event-intent";

/** Who caused an Event, as its submission records it (actor null: recorded before actors were). */
export interface EventCause {
  actor: EventActor | null;
  /** GitHub's author_association of the Item when the Event was recorded */
  authorAssociation: string | null;
  /** why its Run's commits wait for a writer, as recorded (ADR 0058); absent or null: pushed as made */
  review?: ReviewReason | null;
}

/**
 * The Events already recorded among `ids` with who caused them, their chain depth and why their
 * Run's commits wait for review. An Event
 * recorded without an actor (before actors were) is not among them.
 */
export async function recordedActors(db: Db, ids: readonly string[]): Promise<Map<string, EventCause & { actor: EventActor; chainDepth: number }>> {
  const found = await rows<{ id: string; actor: EventActor; association: string | null; depth: number; review: ReviewReason | null }>(
    db.pool,
    sql`SELECT id, submission->'actor' AS actor, submission->>'authorAssociation' AS association,
            COALESCE((submission->>'chainDepth')::int, 0) AS depth, NULLIF(submission->'review', 'null'::jsonb) AS review
       FROM events WHERE id = ANY(${ids}::text[]) AND jsonb_typeof(submission->'actor') = 'object'`,
  );
  return new Map(found.map((r) => [r.id, { actor: r.actor, authorAssociation: r.association, chainDepth: r.depth, review: r.review }]));
}

/**
 * Who caused the newest read of the Item queued for the Loop (a person's request aside: its
 * turn asks no `if:`), or null when none is queued.
 */
export async function newestQueuedCause(db: Db, loop: string, itemKey: string): Promise<EventCause | null> {
  const row = await first<{ actor: EventActor | null; association: string | null }>(
    db.pool,
    sql`SELECT submission->'actor' AS actor, submission->>'authorAssociation' AS association FROM events
      WHERE loop = ${loop} AND item_key = ${itemKey} AND status = 'Queued' AND NOT ${raw(isRequestSql("submission"))}
      ORDER BY received_at DESC, id DESC LIMIT 1`,
  );
  return row ? { actor: row.actor, authorAssociation: row.association } : null;
}

/**
 * The deepest chain depth of the Events whose Runs opened the pull request (a Run on another
 * Item or a Tick: a Run on the pull request itself opened nothing), or null when none did.
 */
export async function chainDepthOfOpeners(db: Db, repo: string, pullRequest: number): Promise<number | null> {
  const row = await first<{ depth: number }>(
    db.pool,
    sql`SELECT COALESCE((e.submission->>'chainDepth')::int, 0) AS depth
       FROM runs r JOIN events e ON e.id = r.event_id
      WHERE r.repo = ${repo} AND r.pull_request_number = ${pullRequest} AND r.number IS DISTINCT FROM ${pullRequest}
      ORDER BY depth DESC LIMIT 1`,
  );
  return row?.depth ?? null;
}

/**
 * Who caused the Event of the first Run that opened the pull request from `branch` (a Run on
 * another Item or a Tick), or null when no Run did.
 */
export async function openerOfPullRequest(db: Db, repo: string, pullRequest: number, branch: string): Promise<EventCause | null> {
  const row = await first<{ actor: EventActor | null; association: string | null }>(
    db.pool,
    sql`SELECT e.submission->'actor' AS actor, e.submission->>'authorAssociation' AS association
       FROM runs r JOIN events e ON e.id = r.event_id
      WHERE r.repo = ${repo} AND r.pull_request_number = ${pullRequest} AND r.number IS DISTINCT FROM ${pullRequest} AND r.branch = ${branch}
      ORDER BY r.created_at, r.id LIMIT 1`,
  );
  return row ? { actor: row.actor, authorAssociation: row.association } : null;
}

/**
 * The text fingerprints (`submission.texts`) the newest Event of each Loop on the Item saw; a Loop
 * whose newest Event recorded none (or that has none) is absent. Ignored Events do not count: a
 * text whose Event never ran is new to the next one.
 */
export async function textsSeenByLoops(db: Db, itemKey: string, loops: readonly string[]): Promise<Map<string, Set<string>>> {
  if (loops.length === 0) return new Map();
  const found = await rows<{ loop: string; texts: string[] | null }>(
    db.pool,
    sql`SELECT DISTINCT ON (loop) loop, submission->'texts' AS texts FROM events
      WHERE item_key = ${itemKey} AND loop = ANY(${loops}::text[]) AND kind = 'item' AND status <> 'Ignored'
      ORDER BY loop, received_at DESC, id DESC`,
  );
  return new Map(found.filter((r) => Array.isArray(r.texts)).map((r) => [r.loop, new Set(r.texts)]));
}
