import { OPEN } from "../../engine/run-state";
import type { CommentRef } from "../../loops/comment-context";
import type { Db } from "../kernel/db";
import { QUOTA_WAITING_PREFIX } from "./repo-metering";
import { first, rows, sql, type Statement } from "../kernel/sql";

/**
 * The work a limit holds (lib/metering/quota-refusals.ts says what each means): open Runs the
 * gate keeps from starting (`waiting_reason = quota:<token>`), and Events a quota Blocked that
 * are still their Item's latest for the Loop, with no Run of the Loop open on the Item.
 */
export interface QuotaRefusalRow {
  kind: "run" | "event";
  reason: string;
  repo: string;
  loop: string;
  number: number | null;
  item_key: string;
  event_id: string;
  run_id: string | null;
  at: Date;
  /** a blocked Event's comment, when a comments Loop matched one (null for a Run or an Item Event) */
  comment: CommentRef | null;
  /** a blocked Event's actor (null for a Run) */
  actor_login: string | null;
}

/** Whose refusals: `reasons`, the tokens a quota blocks an Event with; `repos`, lower-cased (null: all). */
export interface RefusalScope {
  reasons: readonly string[];
  repos: string[] | null;
}

const refusals = ({ reasons, repos }: RefusalScope): Statement => sql`
SELECT 'run' AS kind, r.waiting_reason AS reason, r.repo, r.loop, r.number, r.item_key, r.event_id, r.id AS run_id,
       r.updated_at AS at, NULL::jsonb AS comment, NULL::text AS actor_login
  FROM runs r
 WHERE starts_with(r.waiting_reason, ${QUOTA_WAITING_PREFIX}) AND r.state::text = ANY(${OPEN}) AND (${repos}::text[] IS NULL OR r.repo = ANY(${repos}))
UNION ALL
SELECT 'event', e.reason, e.repo, e.loop, e.number, e.item_key, e.id, NULL, e.received_at,
       CASE WHEN e.submission ? 'comment' THEN jsonb_build_object('kind', e.submission->'comment'->'kind', 'id', e.submission->'comment'->'id') END,
       e.submission->'actor'->>'login'
  FROM events e
 WHERE e.status = 'Blocked' AND e.reason = ANY(${reasons}) AND (${repos}::text[] IS NULL OR e.repo = ANY(${repos}))
   AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.loop = e.loop AND o.item_key = e.item_key AND o.state::text = ANY(${OPEN}))
   AND NOT EXISTS (SELECT 1 FROM events n WHERE n.loop = e.loop AND n.item_key = e.item_key AND n.id <> e.id
                     AND n.received_at > e.received_at)`;

/** The refusals in scope, newest first, at most `limit`. */
export function listQuotaRefusalRows(db: Db, scope: RefusalScope, limit: number): Promise<QuotaRefusalRow[]> {
  return rows<QuotaRefusalRow>(db.pool, sql`${refusals(scope)} ORDER BY at DESC LIMIT ${limit}`);
}

/** How many refusals are in scope. */
export async function countQuotaRefusalRows(db: Db, scope: RefusalScope): Promise<number> {
  return (await first<{ n: number }>(db.pool, sql`SELECT count(*)::int AS n FROM (${refusals(scope)}) AS refusals`))!.n;
}
