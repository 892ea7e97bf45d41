import type { Db } from "../kernel/db";
import { query, sql } from "../kernel/sql";
import { announceRunsChanged } from "./run-changed";
import type { SessionWriter } from "./agent-sessions";

/** Records on the open Attempt (under its lease) the kept session it resumed; the Run page says so. */
export async function recordResumedSession(db: Db, writer: SessionWriter, sessionId: string): Promise<void> {
  const done = await query(
    db.pool,
    sql`UPDATE attempts SET resumed_session = ${sessionId} WHERE id = ${writer.attemptId} AND state = 'Running' AND lease_token = ${writer.leaseToken}`,
  );
  if (done.rowCount) announceRunsChanged(db.pool, [writer.runId]);
}
