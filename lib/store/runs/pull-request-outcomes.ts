import type { Db } from "../kernel/db";
import { rows, sql } from "../kernel/sql";

/** What GitHub last showed of a pull request: open, or merged or closed at a time. */
export interface PullRequestRead {
  repo: string;
  number: number;
  state: "open" | "closed" | "merged";
  /** GitHub's mergedAt, else closedAt (ISO); null while open */
  closedAt: string | null;
}

/** A Run whose pull request was just seen merged or closed. */
export interface PullRequestOutcome {
  runId: string;
  state: "merged" | "closed";
  /** seconds from the Run's trigger (its Event's reception) to the merge or close */
  triggerToCloseS: number;
}

/**
 * Writes on the Runs of these pull requests what became of them (migration
 * 20261208060000_insights_and_retention): merged or closed with when, or nothing again when one
 * was reopened. Only Runs whose record changes are written (index runs(repo, pull_request_number)).
 * Returns the Runs that reached merged or closed with this read.
 */
export async function recordPullRequestStates(db: Db, reads: readonly PullRequestRead[]): Promise<PullRequestOutcome[]> {
  if (reads.length === 0) return [];
  const changed = await rows<{ id: string; state: "merged" | "closed" | null; seconds: number | null }>(
    db.pool,
    sql`WITH pr AS (
       SELECT p.repo, p.number, NULLIF(p.state, 'open') AS state, (p."closedAt" AT TIME ZONE 'UTC') AS closed_at
         FROM json_to_recordset(${JSON.stringify(reads)}::json) AS p(repo text, number int, state text, "closedAt" timestamptz)
     )
     UPDATE runs r SET pull_request_state = pr.state, pull_request_closed_at = CASE WHEN pr.state IS NULL THEN NULL ELSE pr.closed_at END
       FROM pr
      WHERE r.repo = pr.repo AND r.pull_request_number = pr.number
        AND (r.pull_request_state, r.pull_request_closed_at) IS DISTINCT FROM (pr.state, CASE WHEN pr.state IS NULL THEN NULL ELSE pr.closed_at END)
     RETURNING r.id, r.pull_request_state AS state, EXTRACT(EPOCH FROM r.pull_request_closed_at - r.received_at)::float8 AS seconds`,
  );
  return changed.flatMap((r) => (r.state === null || r.seconds === null ? [] : [{ runId: r.id, state: r.state, triggerToCloseS: Math.max(0, r.seconds) }]));
}
