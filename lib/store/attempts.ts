import { attemptId as attemptIdOf, AGENT_STEP } from "../engine/ids";
import { infraFailure, type Failure } from "../engine/failure";
import { decideAfterFailure, type RetryDecision } from "../engine/retry";
import { FROM, isStartable } from "../engine/run-state";
import { AtelierError, ConflictError } from "../errors";
import { admitAttempt } from "../metering/admission";
import type { Refusal } from "../metering/refusal";
import { recordAttemptUsage } from "../metering/usage-counters";
import type { Db } from "./db";
import { markRunsChanged } from "./run-changed";
import { guardedRunUpdate, lockRun, touchRun, type RunRow } from "./run-rows";
import { transaction, type Sql } from "./transaction";

export interface AttemptRef {
  id: string;
  runId: string;
  number: number;
  leaseToken: string;
}

export type BeginResult =
  | { tag: "Started"; attempt: AttemptRef; run: RunRow }
  | { tag: "RunFailed"; run: RunRow; orphan: string }
  /** the admission gate said no: the Run keeps its state and says why (waiting_reason) */
  | { tag: "Refused"; run: RunRow; refusal: Refusal };

/** The message an Attempt gets when its worker stopped holding the lease. */
export const LEASE_EXPIRED = "The worker running this Attempt stopped renewing its lease (it died or lost Redis).";

/**
 * Starts the next Attempt of a Run under a fresh lease token: the first one of a Pending or
 * Queued Run, or Attempt n+1 of a Running Run after an automatic or operator retry. An open
 * Attempt found here is no longer live (the caller checked its lease): it closes as an
 * InfraFailure, which itself counts toward the three automatic Attempts. The admission gate
 * (suspension, concurrency, cost caps) is asked first, in this transaction, so two starts
 * cannot both take an installation's last slot.
 */
export async function beginAttempt(db: Db, runId: string, lease: { token: string; workerId: string }): Promise<BeginResult> {
  return transaction(db, async (sql) => {
    let run = await lockRun(sql, runId);
    const refusal = await admitAttempt(sql, runId, { repo: run.repo, waitingReason: run.waiting_reason });
    if (refusal) return { tag: "Refused", run, refusal };
    if (isStartable(run.state)) {
      run = await guardedRunUpdate(sql, runId, FROM.start, `state = 'Running', started_at = COALESCE(started_at, now())`, [], "start");
    } else if (run.state === "Running") {
      run = await touchRun(sql, runId);
    } else {
      throw new ConflictError("run_state_conflict", `Cannot start an Attempt of a Run that is ${run.state}.`, { state: run.state });
    }
    const latest = await latestAttempt(sql, runId);
    let number = (latest?.number ?? 0) + 1;
    if (latest?.state === "Running") {
      const lost = infraFailure("lease_lost", LEASE_EXPIRED);
      await closeAttempt(sql, latest.id, "Failed", lost);
      if (decideAfterFailure(lost, latest.number).tag === "FailRun") {
        const failed = await guardedRunUpdate(sql, runId, FROM.fail, `state = 'Failed', ended_at = now()`, [], "fail");
        return { tag: "RunFailed", run: failed, orphan: latest.id };
      }
      number = latest.number + 1;
    } else if (latest?.state === "Succeeded") {
      throw new AtelierError("internal_defect", `Run ${runId} is Running but its latest Attempt succeeded.`, 500);
    }
    const id = attemptIdOf(runId, AGENT_STEP, number);
    await sql.query(
      `INSERT INTO attempts (id, run_id, step, number, state, lease_token, worker_id, agent)
       VALUES ($1, $2, $3, $4, 'Running', $5, $6, $7)`,
      [id, runId, AGENT_STEP, number, lease.token, lease.workerId, run.agent],
    );
    return { tag: "Started", attempt: { id, runId, number, leaseToken: lease.token }, run };
  });
}

export interface Usage {
  durationMs: number;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: number | null;
  costEstimated: boolean;
}

export type AttemptResult =
  | {
      tag: "Succeeded";
      summary: string | null;
      usage: Usage;
      branch: string | null;
      pullRequestNumber: number | null;
      headSha: string | null;
    }
  | { tag: "Failed"; failure: Failure; usage: Usage };

export interface FinishResult {
  run: RunRow;
  decision: RetryDecision | { tag: "Succeeded" };
}

/**
 * Records an Attempt's outcome, fenced by its lease token: a worker that lost its lease (the
 * Attempt was closed or re-run by someone else) writes nothing and gets `lease_lost`.
 */
export async function finishAttempt(db: Db, ref: AttemptRef, result: AttemptResult): Promise<FinishResult> {
  return transaction(db, async (sql) => {
    await lockRun(sql, ref.runId);
    const failure = result.tag === "Failed" ? result.failure : null;
    const { rowCount } = await sql.query(
      `UPDATE attempts SET state = $3, ended_at = now(), failure_kind = $4, failure_category = $5, retryable = $6,
              failure_message = $7, summary = $8, duration_ms = $9, tokens_in = $10, tokens_out = $11, cost_usd = $12,
              cost_estimated = $13
        WHERE id = $1 AND state = 'Running' AND lease_token = $2`,
      [
        ref.id,
        ref.leaseToken,
        result.tag,
        failure?.kind ?? null,
        failure?.category ?? null,
        failure?.retryable ?? null,
        failure?.message ?? null,
        result.tag === "Succeeded" ? result.summary : null,
        result.usage.durationMs,
        result.usage.tokensIn,
        result.usage.tokensOut,
        result.usage.costUsd,
        result.usage.costEstimated,
      ],
    );
    if (!rowCount) {
      throw new ConflictError("lease_lost", `Attempt ${ref.id} no longer holds its lease; its outcome was not recorded.`);
    }
    await recordAttemptUsage(sql, ref.id); // metering: cost and minutes onto the month's counters
    if (result.tag === "Succeeded") {
      const run = await guardedRunUpdate(
        sql,
        ref.runId,
        FROM.succeed,
        `state = 'Succeeded', ended_at = now(), branch = COALESCE($3, branch),
         pull_request_number = COALESCE($4, pull_request_number), head_sha = COALESCE($5, head_sha)`,
        [result.branch, result.pullRequestNumber, result.headSha],
        "succeed",
      );
      return { run, decision: { tag: "Succeeded" } };
    }
    const decision = decideAfterFailure(result.failure, ref.number);
    const run =
      decision.tag === "RetryAttempt"
        ? await touchRun(sql, ref.runId)
        : await guardedRunUpdate(sql, ref.runId, FROM.fail, `state = 'Failed', ended_at = now()`, [], "fail");
    return { run, decision };
  });
}

/** Records the branch and pull request an Attempt produced as soon as it is known. */
export async function recordPullRequest(db: Db, runId: string, pr: { branch: string; number: number; headSha: string }) {
  await db.pool.query(
    `UPDATE runs SET branch = $2, pull_request_number = $3, head_sha = $4, updated_at = now() WHERE id = $1`,
    [runId, pr.branch, pr.number, pr.headSha],
  );
  await markRunsChanged(db.pool, [runId]);
}

interface AttemptRow {
  id: string;
  number: number;
  state: "Running" | "Succeeded" | "Failed" | "Canceled";
  lease_token: string | null;
}

export async function latestAttempt(sql: Sql | Db["pool"], runId: string): Promise<AttemptRow | null> {
  const { rows } = await sql.query<AttemptRow>(
    `SELECT id, number, state, lease_token FROM attempts WHERE run_id = $1 ORDER BY number DESC LIMIT 1`,
    [runId],
  );
  return rows[0] ?? null;
}

async function closeAttempt(sql: Sql, id: string, state: "Failed" | "Canceled", failure: Failure | null): Promise<void> {
  await sql.query(
    `UPDATE attempts SET state = $2, ended_at = now(), failure_kind = $3, failure_category = $4, retryable = $5,
            failure_message = $6, duration_ms = (EXTRACT(EPOCH FROM now() - started_at) * 1000)::int
      WHERE id = $1 AND state = 'Running'`,
    [id, state, failure?.kind ?? null, failure?.category ?? null, failure?.retryable ?? null, failure?.message ?? null],
  );
}

/** Closes a Run's open Attempt as Canceled (operator cancel); returns its id. */
export async function cancelOpenAttempt(sql: Sql, runId: string): Promise<string | null> {
  const { rows } = await sql.query<{ id: string }>(
    `UPDATE attempts SET state = 'Canceled', ended_at = now(), duration_ms = (EXTRACT(EPOCH FROM now() - started_at) * 1000)::int
      WHERE run_id = $1 AND state = 'Running' RETURNING id`,
    [runId],
  );
  return rows[0]?.id ?? null;
}

/** Closes an Attempt whose lease expired (found by the sweep); the Run goes on or fails. */
export async function expireAttempt(db: Db, attemptId: string): Promise<{ run: RunRow; decision: RetryDecision } | null> {
  return transaction(db, async (sql) => {
    const { rows } = await sql.query<{ run_id: string; number: number }>(
      `SELECT run_id, number FROM attempts WHERE id = $1 AND state = 'Running'`,
      [attemptId],
    );
    const row = rows[0];
    if (!row) return null;
    await lockRun(sql, row.run_id);
    const lost = infraFailure("lease_lost", LEASE_EXPIRED);
    await closeAttempt(sql, attemptId, "Failed", lost);
    const decision = decideAfterFailure(lost, row.number);
    const run =
      decision.tag === "RetryAttempt"
        ? await touchRun(sql, row.run_id)
        : await guardedRunUpdate(sql, row.run_id, FROM.fail, `state = 'Failed', ended_at = now()`, [], "fail");
    return { run, decision };
  });
}
