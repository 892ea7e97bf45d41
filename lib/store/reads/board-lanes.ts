import { RUN_STATE_SQL } from "../../engine/run-predicates";
import type { RunStateName } from "../../engine/run-state";
import type { Db } from "../kernel/db";
import type { ItemColumns } from "../items/stored-items";
import { join, raw, rows, sql, type Statement } from "../kernel/sql";

/**
 * The Board's read: the Items of the repositories in scope, each in its lane (computed in SQL),
 * the first `perLane` cards of each lane kept by a window, and only those few cards joined to
 * their Run, newest Attempt and cycle budget ask (LATERAL, by index). Tuned for 50,000 Items
 * (ADR 0024, amendment): change the text only with `npm run bench -- scale`.
 */

/** Where each lane sits among the instance's lanes (lib/dashboard/lanes.ts computes them). */
export interface LaneRules {
  /** Lower-cased label of each lane, null for lanes without one (same order as the lanes). */
  labels: (string | null)[];
  /** Index of the open catch-all lane, or null. */
  openCatchAll: number | null;
  /** Index of the closed lane, or null. */
  closed: number | null;
  /** Index of the lane that follows running Runs, or null. */
  running: number | null;
  /** Index of the lane that follows open pull requests of Runs, or null. */
  review: number | null;
}

export interface BoardCardRow extends ItemColumns {
  lane: number;
  lane_total: string;
  updated_at: Date;
  run_id: string | null;
  run_loop: string | null;
  run_state: RunStateName | null;
  waiting_reason: string | null;
  pull_request_number: number | null;
  pull_request_state: string | null;
  run_updated_at: Date | null;
  resolved_failure_attempt_id: string | null;
  attempt_id: string | null;
  attempt_number: number | null;
  attempt_state: string | null;
  failure_kind: string | null;
  attempt_started_at: Date | null;
  last_stream: string | null;
  last_text: string | null;
  budget_ask: boolean;
}

/**
 * The current Run of Item `i` (its open one, else its newest), what the lane reads of it: its
 * id, whether it runs, its pull request. The Item keeps the first and the last, and whether
 * the Run is open, written by Postgres with the Run (migration 20261201490000_item_current_run):
 * only an open one is asked whether it runs, by its primary key.
 */
const ITEM_RUN = raw(`CROSS JOIN LATERAL (
           SELECT i.current_run_id AS id, i.current_run_pull_request AS pull_request_number,
                  CASE WHEN i.current_run_open THEN EXISTS (SELECT 1 FROM runs r WHERE r.id = i.current_run_id AND r.state = 'Running')
                       ELSE false END AS running) cur`);

/** The same among one Loop's Runs, looked up by the Item's Runs of that Loop. */
const loopRun = (loop: string): Statement => sql`LEFT JOIN LATERAL (
           SELECT r.id, r.pull_request_number, r.state = 'Running' AS running FROM runs r
            WHERE r.item_key = i.key AND r.loop = ${loop}
            ORDER BY (${raw(RUN_STATE_SQL.isOpen("r.state"))}) DESC, r.received_at DESC, r.id DESC LIMIT 1) cur ON true`;

export async function readBoardCards(
  db: Db,
  q: { repos: string[]; rules: LaneRules; loop: string | null; perLane: number },
): Promise<BoardCardRow[]> {
  const { repos, rules, loop, perLane } = q;
  // The lane as one CASE (laneOf in lib/dashboard/lanes.ts): closed Items and closed pull
  // requests of the current Run, then the lanes that follow the work, then the Item's
  // lower-cased labels, right-most lane first; the lane labels are values, never text.
  const whens = rules.labels
    .flatMap((label, idx) => (label ? [{ label, idx }] : []))
    .reverse()
    .map(({ label, idx }) => sql`WHEN ${label}::text = ANY (ll.labels) THEN ${raw(String(idx))}`);
  const closed = rules.closed;
  return rows<BoardCardRow>(
    db.pool,
    sql`WITH scoped AS MATERIALIZED (
       SELECT i.key, COALESCE(i.github_updated_at, i.observed_at) AS updated_at,
              CASE WHEN i.state <> 'open' THEN ${closed}::int
                   WHEN ${closed}::int IS NOT NULL AND pr.state <> 'open' THEN ${closed}::int
                   WHEN ${rules.running}::int IS NOT NULL AND cur.running THEN ${rules.running}::int
                   WHEN ${rules.review}::int IS NOT NULL AND pr.state = 'open' THEN ${rules.review}::int
                   ${join(whens, " ")} ELSE ${rules.openCatchAll}::int END AS lane,
              cur.id AS run_id, pr.state AS pull_request_state
         FROM items i
         CROSS JOIN LATERAL (SELECT lower(i.labels::text)::text[] AS labels) ll
         ${loop ? loopRun(loop) : ITEM_RUN}
         LEFT JOIN LATERAL (
           SELECT pr.state FROM items pr WHERE cur.pull_request_number IS NOT NULL AND pr.repo = i.repo AND pr.number = cur.pull_request_number
         ) pr ON true
        WHERE i.repo = ANY(${repos}::text[])
          AND (${loop}::text IS NULL OR cur.id IS NOT NULL)
          -- a pull request another Item's Run opened is on that Item's card, not a card of its own
          AND (${loop}::text IS NOT NULL OR i.kind <> 'pull_request'
               OR NOT EXISTS (SELECT 1 FROM runs o WHERE o.repo = i.repo AND o.pull_request_number = i.number AND o.item_key <> i.key))
     ), totals AS (
       SELECT lane, count(*) AS lane_total FROM scoped WHERE lane IS NOT NULL GROUP BY lane
     ), ranked AS (
       -- each lane's newest cards, by a top-N pass per lane rather than a sort of every Item
       SELECT t.lane, t.lane_total, s.*, row_number() OVER (PARTITION BY t.lane ORDER BY s.updated_at DESC, s.key) AS rn
         FROM totals t
         CROSS JOIN LATERAL (
           SELECT s.key, s.updated_at, s.run_id, s.pull_request_state FROM scoped s
            WHERE s.lane = t.lane ORDER BY s.updated_at DESC, s.key LIMIT ${perLane}
         ) s
     )
     SELECT k.lane, k.lane_total, i.key, i.repo, i.number, i.kind, i.state, i.title, i.author, i.labels, i.draft, k.updated_at,
            run.id AS run_id, run.loop AS run_loop, run.state AS run_state, run.waiting_reason, run.pull_request_number, k.pull_request_state,
            run.updated_at AS run_updated_at, run.resolved_failure_attempt_id,
            a.id AS attempt_id, a.number AS attempt_number, a.state AS attempt_state, a.failure_kind,
            a.started_at AS attempt_started_at, last.stream AS last_stream, last.text AS last_text,
            EXISTS (SELECT 1 FROM cycle_budgets cb WHERE cb.item_key = k.key AND cb.ask IS NOT NULL) AS budget_ask
       FROM ranked k
       -- only the cards shown join their Item and Run (by key, one at a time: LIMIT keeps it a lookup)
       CROSS JOIN LATERAL (SELECT * FROM items i WHERE i.key = k.key LIMIT 1) i
       LEFT JOIN LATERAL (
         SELECT r.id, r.loop, r.state::text AS state, r.waiting_reason, r.pull_request_number, r.updated_at, r.resolved_failure_attempt_id
           FROM runs r WHERE r.id = k.run_id LIMIT 1
       ) run ON true
       LEFT JOIN LATERAL (
         SELECT at.id, at.number, at.state::text AS state, at.failure_kind, at.started_at
           FROM attempts at WHERE at.run_id = run.id ORDER BY at.number DESC LIMIT 1
       ) a ON true
       LEFT JOIN LATERAL (
         SELECT te.stream, te.text
           FROM transcript_entries te WHERE run.state = 'Running' AND te.run_id = run.id ORDER BY te.id DESC LIMIT 1
       ) last ON true
      ORDER BY k.lane, k.rn`,
  );
}

/** What a card's move reads of its Item: its state and labels (null when Atelier has not seen it). */
export async function itemLaneFacts(db: Db, repo: string, number: number): Promise<{ state: string; labels: string[] } | null> {
  return db.prisma.item.findUnique({ where: { repo_number: { repo, number } }, select: { state: true, labels: true } });
}
