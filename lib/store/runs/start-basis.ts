import { repoMeteringSql, type RepoMetering } from "../metering/repo-metering";
import type { Db } from "../kernel/db";
import { RUN_COLUMNS, type RunRow } from "./run-rows";
import { firstPrepared, raw, sql, type Statement } from "../kernel/sql";

/**
 * A Run as the runner decides on it, read in one statement: its row and the version of that
 * row, its latest Attempt, and whether the admission gate has anything to ask for it. An
 * Attempt starts only on the version it was decided on (startAttempt): a Run changed meanwhile
 * is read again and decided again.
 */
export interface RunSnapshot extends StartBasis {
  run: RunRow;
}

/** What a start is decided on, and guarded by (`version`). */
export interface StartBasis {
  run: Pick<RunRow, "id" | "state" | "repo" | "waiting_reason" | "approval_required" | "received_at">;
  /** The row's version (its xmin): every write of the Run changes it. */
  version: string;
  latest: { id: string; number: number; state: "Running" | "Succeeded" | "Failed" | "Canceled"; lease_token: string | null } | null;
  /** A quota is set on the Run's installation or repository, or the installation is suspended. */
  admissionGated: boolean;
}

const snapshotSql = (runId: string): Statement => sql`SELECT ${raw(RUN_COLUMNS)}, runs.xmin::text AS version,
    (SELECT json_build_object('id', a.id, 'number', a.number, 'state', a.state, 'lease_token', a.lease_token)
       FROM attempts a WHERE a.run_id = runs.id ORDER BY a.number DESC LIMIT 1) AS latest_attempt,
    ${repoMeteringSql(raw("runs.repo"))} AS metering
   FROM runs WHERE id = ${runId}`;

type SnapshotRow = RunRow & { version: string; latest_attempt: RunSnapshot["latest"]; metering: RepoMetering | null };

export async function readRunSnapshot(db: Db, runId: string): Promise<RunSnapshot | null> {
  const row = await firstPrepared<SnapshotRow>(db.pool, "atelier-runner-snapshot", snapshotSql(runId));
  if (!row) return null;
  const { latest_attempt, version, metering, ...run } = row;
  return { run, version, latest: latest_attempt, admissionGated: metering?.gated ?? false };
}

/** The Loop asks for an operator's approval and none was given yet. */
export const needsApproval = (run: Pick<RunRow, "state" | "approval_required">): boolean =>
  run.state === "Pending" && run.approval_required;

/** An Attempt of the Run is open: only its lease holder (or the orphan sweep) may move the Run. */
export const hasOpenAttempt = (snap: Pick<StartBasis, "latest">): boolean => snap.latest?.state === "Running";
