import type { Db } from "../store/db";
import { RUN_COLUMNS, type RunRow } from "../store/run-rows";

/** A Run and its latest Attempt, read in one statement: what the runner decides on. */
export interface RunSnapshot {
  run: RunRow;
  latest: { id: string; number: number; state: "Running" | "Succeeded" | "Failed" | "Canceled"; lease_token: string | null } | null;
}

const SNAPSHOT = {
  name: "atelier-runner-snapshot",
  text: `SELECT ${RUN_COLUMNS},
    (SELECT json_build_object('id', a.id, 'number', a.number, 'state', a.state, 'lease_token', a.lease_token)
       FROM attempts a WHERE a.run_id = runs.id ORDER BY a.number DESC LIMIT 1) AS latest_attempt
   FROM runs WHERE id = $1`,
};

export async function readRunSnapshot(db: Db, runId: string): Promise<RunSnapshot | null> {
  const { rows } = await db.pool.query<RunRow & { latest_attempt: RunSnapshot["latest"] }>({ ...SNAPSHOT, values: [runId] });
  const row = rows[0];
  if (!row) return null;
  const { latest_attempt, ...run } = row;
  return { run, latest: latest_attempt };
}

/** The Loop asks for an operator's approval and none was given yet. */
export const needsApproval = (run: Pick<RunRow, "state" | "approval_required">): boolean =>
  run.state === "Pending" && run.approval_required;

/** An Attempt of the Run is open: only its lease holder (or the orphan sweep) may move the Run. */
export const hasOpenAttempt = (snap: RunSnapshot): boolean => snap.latest?.state === "Running";
