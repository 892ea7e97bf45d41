import type { RunStateName } from "../../engine/run-state";
import type { Db } from "../kernel/db";
import { rows, sql } from "../kernel/sql";

/**
 * The Runs list's read: a page of the Runs of some repositories, newest first, filtered and
 * searched, cut by a keyset cursor on (received_at, id). Tuned for 1,000,000 Runs (ADR 0024,
 * amendment): change the text only with `npm run bench -- scale`.
 */

export interface RunsPageQuery {
  repos: string[];
  loop: string | null;
  agent: string | null;
  state: RunStateName | null;
  /** Words of an Item's title (null: no search), and what else the same search matches. */
  title: string | null;
  number: number | null;
  idPrefix: string | null;
  /** The position of the last Run of the page before (null: the first page). */
  after: { at: string; id: string } | null;
  take: number;
}

export interface RunsPageRow {
  id: string;
  repo: string;
  loop: string;
  agent: string;
  number: number | null;
  state: RunStateName;
  pull_request_number: number | null;
  at: Date;
  /** received_at to the microsecond, in UTC (what the cursor keeps). */
  received_at: string;
  ended_at: Date | null;
  title: string | null;
}

export async function readRunsPage(db: Db, q: RunsPageQuery): Promise<RunsPageRow[]> {
  // per repository, the newest Runs after the cursor in its own index range (a backward scan
  // of runs_repo_received_at_id_idx that stops at the page's size), then merged: one range of
  // many repositories cannot be read in order by an index on (repo, received_at, id)
  const afterAt = q.after?.at ?? null;
  return rows<RunsPageRow>(
    db.pool,
    sql`SELECT x.* FROM unnest(${q.repos}::text[]) AS s(repo) CROSS JOIN LATERAL (
       SELECT r.id, r.repo, r.loop, r.agent, r.number, r.state::text AS state, r.pull_request_number, r.received_at AS at,
              to_char(r.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS received_at, r.ended_at, i.title
         FROM runs r LEFT JOIN items i ON i.key = r.item_key
        WHERE r.repo = s.repo
          AND (${q.loop}::text IS NULL OR r.loop = ${q.loop})
          AND (${q.agent}::text IS NULL OR r.agent = ${q.agent})
          AND (${q.state}::text IS NULL OR r.state::text = ${q.state})
          AND (${q.title}::text IS NULL OR r.number = ${q.number}::int OR r.id LIKE ${q.idPrefix} || '%'
               OR i.title ILIKE '%' || replace(replace(replace(${q.title}, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')
          AND (${afterAt}::timestamptz IS NULL OR (r.received_at, r.id) < (${afterAt}::timestamptz, ${q.after?.id ?? null}::text))
        ORDER BY r.received_at DESC, r.id DESC
        LIMIT ${q.take}) x
      ORDER BY x.at DESC, x.id DESC
      LIMIT ${q.take}`,
  );
}
