import type { BoardLane } from "../config/roster";
import { isRunning } from "../engine/run-predicates";
import type { RunStateName } from "../engine/run-state";
import { readBoardCards, type BoardCardRow } from "../store/reads/board-lanes";
import type { Db } from "../store/kernel/db";
import { laneRules } from "./lanes";
import { WORKER_STALE_AFTER_MS } from "../runner/worker-heartbeat";
import { anyWorkerAlive } from "../store/runs/worker-registry";
import { waitsFor } from "./run-status";
import { lastStepLine } from "./transcript-steps";

/**
 * The Board's read model: the Items of the repositories in scope, in the instance's lanes,
 * each with its current Run (the open one, else the newest) and that Run's pull request and its
 * state. A pull request another Item's Run opened is not a card of its own: it is on that Item's
 * card (unless the Board is filtered by a Loop, which shows the Items with that Loop's Runs).
 * One indexed query (lib/store/reads/board-lanes.ts) picks the cards of each lane; this shapes them.
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

/** An Item's card: its row's own fields, its current Run, and whether it asks for more cycles. */
export interface BoardCard extends Pick<BoardCardRow, "key" | "repo" | "number" | "kind" | "state" | "title" | "author" | "labels" | "draft"> {
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

export const DEFAULT_PER_LANE = 50;
export const MAX_PER_LANE = 200;

export async function loadBoard(db: Db, q: BoardQuery): Promise<Board> {
  const perLane = Math.min(MAX_PER_LANE, Math.max(1, q.perLane ?? DEFAULT_PER_LANE));
  const rules = laneRules(q.lanes);
  const views: BoardLaneView[] = q.lanes.map((l) => ({ name: l.name, label: l.label, state: l.state, total: 0, cards: [] }));
  if (!q.repos.length) return { lanes: views, perLane };

  const rows = await readBoardCards(db, { repos: q.repos, rules, loop: q.loop || null, perLane });

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
