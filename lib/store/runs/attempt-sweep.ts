import { RUN_STATE_SQL } from "../../engine/run-predicates";
import type { Db } from "../kernel/db";
import { raw, rows, sql } from "../kernel/sql";
import { workerDeadSql } from "./worker-registry";

/** A Running Attempt, with the Run it holds the lease of and the token it holds it by. */
export interface RunningAttempt {
  id: string;
  run_id: string;
  lease_token: string | null;
}

/** The Attempts a worker still has Running (a live worker of its host closes them when its process is gone). */
export function runningAttemptsOfWorker(db: Db, workerId: string): Promise<RunningAttempt[]> {
  return rows<RunningAttempt>(db.pool, sql`SELECT id, run_id, lease_token FROM attempts WHERE worker_id = ${workerId} AND state = 'Running'`);
}

/** A Running Attempt the orphan sweep looks at: its worker, and whether the registry says that worker is dead. */
export interface OrphanSuspect extends RunningAttempt {
  worker_id: string | null;
  worker_dead: boolean;
}

/**
 * The Running Attempts started more than `olderThanMs` ago, each with whether its worker is
 * dead in the registry (no heartbeat for `staleAfterMs`, or stopped).
 */
export function orphanSuspects(db: Db, window: { olderThanMs: number; staleAfterMs: number }): Promise<OrphanSuspect[]> {
  // a Running Attempt is the latest of a Running Run (the start and every close write both)
  return rows<OrphanSuspect>(
    db.pool,
    sql`SELECT a.id, a.run_id, a.lease_token, a.worker_id, ${workerDeadSql("w", window.staleAfterMs)} AS worker_dead
          FROM runs r JOIN attempts a ON a.run_id = r.id LEFT JOIN workers w ON w.id = a.worker_id
         WHERE ${raw(RUN_STATE_SQL.isRunning("r.state"))} AND a.state = 'Running'
           AND a.started_at < now() - make_interval(secs => ${window.olderThanMs}::float8 / 1000)`,
  );
}
