import type { BoardLane } from "../config/roster";
import { isRunning } from "../engine/run-predicates";
import type { RunStateName } from "../engine/run-state";
import { inPhase } from "../store/run-phase";
import type { Db } from "../store/db";
import { laneRules } from "./lanes";
import { WORKER_STALE_AFTER_MS } from "../runner/worker-heartbeat";
import { anyWorkerAlive } from "../store/workers";
import { waitsFor } from "./run-status";
import { lastStepLine } from "./transcript-steps";

/**
 * The Board's read model: the Items of the repositories in scope, in the instance's lanes,
 * each with its current Run (the open one, else the newest) and that Run's pull request and its
 * state. A pull request another Item's Run opened is not a card of its own: it is on that Item's
 * card (unless the Board is filtered by a Loop, which shows the Items with that Loop's Runs). One indexed query: the lane is
 * computed in SQL, the first `perLane` cards of each lane are kept by a window, and only
 * those few cards join their Run, newest Attempt and cycle budget ask (LATERAL, by index).
 */

export interface BoardQuery {
  repos: string[];
  lanes: readonly BoardLane[];
  /** Only Items with a Run of this Loop, showing that Loop's Run. */
  loop?: string | null;
  /** Cards per lane (newest first); the lane's total is given beside. */
  perLane?: number;
}

export interface BoardRun {
  id: string;
  loop: string;
  state: RunStateName;
  waitsFor: string | null;
  pullRequestNumber: number | null;
  /** The state of that pull request as last seen ("open", "closed", "merged"), null until it is seen. */
  pullRequestState: string | null;
  attempt: number | null;
  failureKind: string | null;
  updatedAt: string;
  /** When the running Attempt started (null unless the Run is Running). */
  runningSince: string | null;
  /** What the running Attempt did last, on one line (null unless the Run is Running). */
  lastStep: string | null;
}

export interface BoardCard {
  key: string;
  repo: string;
  number: number;
  kind: string;
  state: string;
  title: string;
  author: string | null;
  labels: string[];
  draft: boolean;
  updatedAt: string;
  run: BoardRun | null;
  budgetAsk: boolean;
}

export interface BoardLaneView {
  name: string;
  label: string | null;
  state: "open" | "closed";
  total: number;
  cards: BoardCard[];
}

export interface Board {
  lanes: BoardLaneView[];
  perLane: number;
}

interface Row {
  lane: number;
  lane_total: string;
  key: string;
  repo: string;
  number: number;
  kind: string;
  state: string;
  title: string;
  author: string | null;
  labels: string[];
  draft: boolean;
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
const ITEM_RUN = `CROSS JOIN LATERAL (
           SELECT i.current_run_id AS id, i.current_run_pull_request AS pull_request_number,
                  CASE WHEN i.current_run_open THEN EXISTS (SELECT 1 FROM runs r WHERE r.id = i.current_run_id AND r.state = 'Running')
                       ELSE false END AS running) cur`;

/** The same among one Loop's Runs ($4), looked up by the Item's Runs of that Loop. */
const LOOP_RUN = `LEFT JOIN LATERAL (
           SELECT r.id, r.pull_request_number, r.state = 'Running' AS running FROM runs r
            WHERE r.item_key = i.key AND r.loop = $4
            ORDER BY (${inPhase("r", "Active", "Waiting")}) DESC, r.received_at DESC, r.id DESC LIMIT 1) cur ON true`;

export const DEFAULT_PER_LANE = 50;
export const MAX_PER_LANE = 200;

export async function loadBoard(db: Db, q: BoardQuery): Promise<Board> {
  const perLane = Math.min(MAX_PER_LANE, Math.max(1, q.perLane ?? DEFAULT_PER_LANE));
  const rules = laneRules(q.lanes);
  const views: BoardLaneView[] = q.lanes.map((l) => ({ name: l.name, label: l.label, state: l.state, total: 0, cards: [] }));
  if (!q.repos.length) return { lanes: views, perLane };

  const loop = q.loop || null;
  // The lane as one CASE (laneOf in lanes.ts): closed Items and closed pull requests of the
  // current Run, then the lanes that follow the work, then the Item's lower-cased labels,
  // right-most lane first; the lane labels are parameters ($8…), never spliced into the text.
  const labelled = rules.labels.flatMap((label, idx) => (label ? [{ label, idx }] : [])).reverse();
  const params: unknown[] = [q.repos, rules.openCatchAll, rules.closed, loop, perLane, rules.running, rules.review];
  const whens = labelled.map(({ label, idx }) => {
    params.push(label);
    return `WHEN $${params.length}::text = ANY (ll.labels) THEN ${idx}`;
  });
  const { rows } = await db.pool.query<Row>(
    `WITH scoped AS MATERIALIZED (
       SELECT i.key, COALESCE(i.github_updated_at, i.observed_at) AS updated_at,
              CASE WHEN i.state <> 'open' THEN $3::int
                   WHEN $3::int IS NOT NULL AND pr.state <> 'open' THEN $3::int
                   WHEN $6::int IS NOT NULL AND cur.running THEN $6::int
                   WHEN $7::int IS NOT NULL AND pr.state = 'open' THEN $7::int
                   ${whens.join(" ")} ELSE $2::int END AS lane,
              cur.id AS run_id, pr.state AS pull_request_state
         FROM items i
         CROSS JOIN LATERAL (SELECT lower(i.labels::text)::text[] AS labels) ll
         ${loop ? LOOP_RUN : ITEM_RUN}
         LEFT JOIN LATERAL (
           SELECT pr.state FROM items pr WHERE cur.pull_request_number IS NOT NULL AND pr.repo = i.repo AND pr.number = cur.pull_request_number
         ) pr ON true
        WHERE i.repo = ANY($1::text[])
          AND ($4::text IS NULL OR cur.id IS NOT NULL)
          -- a pull request another Item's Run opened is on that Item's card, not a card of its own
          AND ($4::text IS NOT NULL OR i.kind <> 'pull_request'
               OR NOT EXISTS (SELECT 1 FROM runs o WHERE o.repo = i.repo AND o.pull_request_number = i.number AND o.item_key <> i.key))
     ), totals AS (
       SELECT lane, count(*) AS lane_total FROM scoped WHERE lane IS NOT NULL GROUP BY lane
     ), ranked AS (
       -- each lane's newest cards, by a top-N pass per lane rather than a sort of every Item
       SELECT t.lane, t.lane_total, s.*, row_number() OVER (PARTITION BY t.lane ORDER BY s.updated_at DESC, s.key) AS rn
         FROM totals t
         CROSS JOIN LATERAL (
           SELECT s.key, s.updated_at, s.run_id, s.pull_request_state FROM scoped s
            WHERE s.lane = t.lane ORDER BY s.updated_at DESC, s.key LIMIT $5
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
    params,
  );

  // what a Queued Run waits for depends on whether any worker runs: asked only when one shows
  const workerRunning = rows.some((r) => r.run_state === "Queued") ? await anyWorkerAlive(db, WORKER_STALE_AFTER_MS) : true;
  for (const r of rows) {
    const view = views[r.lane];
    if (!view) continue;
    view.total = Number(r.lane_total);
    let run: BoardRun | null = null;
    if (r.run_id && r.run_state) {
      const latestFailed = r.attempt_state === "Failed" ? r.attempt_id : null;
      const facts = {
        state: r.run_state,
        waitingReason: r.waiting_reason,
        pullRequestNumber: r.pull_request_number,
        latestFailedAttemptId: latestFailed,
        resolvedFailureAttemptId: r.resolved_failure_attempt_id,
        workerRunning,
      };
      run = {
        id: r.run_id,
        loop: r.run_loop ?? "",
        state: r.run_state,
        // a closed Item waits for nobody, whatever its last Run did
        waitsFor: r.state === "open" || r.run_state !== "Succeeded" ? waitsFor(facts) : null,
        pullRequestNumber: r.pull_request_number,
        pullRequestState: r.pull_request_number ? r.pull_request_state : null,
        attempt: r.attempt_number,
        failureKind: r.failure_kind,
        updatedAt: (r.run_updated_at ?? r.updated_at).toISOString(),
        runningSince: isRunning(r.run_state) ? (r.attempt_started_at?.toISOString() ?? null) : null,
        lastStep: isRunning(r.run_state) && r.last_stream !== null && r.last_text !== null ? lastStepLine({ stream: r.last_stream, text: r.last_text }) : null,
      };
    }
    view.cards.push({
      key: r.key,
      repo: r.repo,
      number: r.number,
      kind: r.kind,
      state: r.state,
      title: r.title,
      author: r.author,
      labels: r.labels,
      draft: r.draft,
      updatedAt: r.updated_at.toISOString(),
      run,
      budgetAsk: r.budget_ask,
    });
  }
  return { lanes: views, perLane };
}
