import { FROM, TRANSITIONS, type Transition } from "../engine/run-state";
import { BadInputError, ConflictError } from "../errors";
import type { Db } from "./db";
import { audit } from "./audit";
import { cancelOpenAttempt } from "./attempts";
import { isParkedByEngineFailures } from "./engine-failures";
import { guardedRunUpdate, lockRun, type RunRow } from "./run-rows";
import { transaction, type Sql } from "./transaction";

/** The exclusion constraint `runs_one_open_per_loop_item` says another Run of this Loop is open on the Item. */
function isOpenRunConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === "23P01" && e.constraint === "runs_one_open_per_loop_item";
}

async function reopen(sql: Sql, runId: string, transition: Transition<"Running">, set: string, params: unknown[], action: string): Promise<RunRow> {
  try {
    // the constraint is deferred to COMMIT for the claim; a reopen wants its answer here
    await sql.query("SET CONSTRAINTS runs_one_open_per_loop_item IMMEDIATE");
    return await guardedRunUpdate(sql, runId, transition, `ended_at = NULL${set}`, params, action);
  } catch (err) {
    if (!isOpenRunConflict(err)) throw err;
    throw new ConflictError("open_run_exists", "Another Run of this Loop is already open on this Item; cancel it first.");
  }
}

/**
 * The session the last Attempt's agent reported, when the Run's agent (after `$agent`, an
 * amendment's, null: unchanged) is still the one that ran it: the next Attempts resume it.
 */
const RESUME_LAST_SESSION = (agent: string) => `, resume_session = (
  SELECT CASE WHEN a.agent IS NOT DISTINCT FROM COALESCE(${agent}, runs.agent) THEN a.session_id END
    FROM attempts a WHERE a.run_id = runs.id ORDER BY a.number DESC LIMIT 1)`;

/** An operator's retry forgets the Run's engine failures (lib/store/engine-failures.ts). */
const RESET_ENGINE_FAILURES = ", engine_failures = 0, engine_error = NULL";

/**
 * Operator retry: a Run parked by engine failures before any Attempt, Waiting → Queued; a
 * Failed one, Failed → Running; the next Attempt (n+1) starts from the pushed branch and
 * resumes the last Attempt's agent session when it reported one.
 */
export async function retryRun(db: Db, runId: string, actor: string): Promise<RunRow> {
  return transaction(db, async (sql) => {
    const locked = await lockRun(sql, runId);
    const run = isParkedByEngineFailures(locked.state, locked.waiting_reason)
      ? await guardedRunUpdate(sql, runId, TRANSITIONS.retryParked, `waiting_reason = NULL${RESET_ENGINE_FAILURES}`, [], "retry")
      : await reopen(sql, runId, TRANSITIONS.retry, `${RESUME_LAST_SESSION("NULL::text")}${RESET_ENGINE_FAILURES}`, [], "retry");
    await audit(sql, { actor, action: "retry", repo: run.repo, runId });
    return run;
  });
}

export interface RunAmendment {
  prompt?: string;
  agent?: string;
}

/**
 * Edit and retry: replaces the Run's task text and/or Agent, then retries it. The same agent
 * resumes its last session with the new task as its next message; another agent starts afresh.
 */
export async function editAndRetryRun(db: Db, runId: string, actor: string, amendment: RunAmendment): Promise<RunRow> {
  if (amendment.prompt === undefined && amendment.agent === undefined) {
    throw new BadInputError("amendment_empty", "Give a new prompt, a new agent, or both.");
  }
  return transaction(db, async (sql) => {
    const run = await reopen(
      sql,
      runId,
      TRANSITIONS.editAndRetry,
      // another agent gets its own default model: the Loop picked this one among the old agent's
      `, prompt = COALESCE($3, prompt), agent = COALESCE($4, agent), model = CASE WHEN $4::text IS NULL OR $4 = agent THEN model END${RESUME_LAST_SESSION("$4::text")}`,
      [amendment.prompt ?? null, amendment.agent ?? null],
      "edit and retry",
    );
    await audit(sql, { actor, action: "edit_and_retry", repo: run.repo, runId, detail: amendment });
    return run;
  });
}

/**
 * Operator cancel: any open state becomes Canceled; an open Attempt closes as Canceled (the
 * caller then stops its agent). A Run canceled before its first Attempt gives its cycle
 * reservation back.
 */
export async function cancelRun(db: Db, runId: string, actor: string): Promise<{ run: RunRow; canceledAttempt: string | null }> {
  return transaction(db, async (sql) => {
    await lockRun(sql, runId);
    const run = await guardedRunUpdate(
      sql,
      runId,
      TRANSITIONS.cancel,
      `cancel_reason = 'OperatorCanceled', ended_at = now(), waiting_reason = NULL,
       reserved_generation = CASE WHEN state::text = ANY($3) THEN NULL ELSE reserved_generation END`,
      [FROM.supersede],
      "cancel",
    );
    const canceledAttempt = await cancelOpenAttempt(sql, runId);
    await audit(sql, { actor, action: "cancel", repo: run.repo, runId });
    return { run, canceledAttempt };
  });
}

/** Marks the latest failed Attempt as handled; the state does not change. */
export async function resolveFailure(db: Db, runId: string, actor: string): Promise<RunRow> {
  return transaction(db, async (sql) => {
    const run = await guardedRunUpdate(
      sql,
      runId,
      TRANSITIONS.resolveFailure,
      `resolved_failure_attempt_id = (SELECT id FROM attempts WHERE run_id = $1 AND state = 'Failed' ORDER BY number DESC LIMIT 1)`,
      [],
      "resolve the failure of",
    );
    await audit(sql, { actor, action: "resolve_failure", repo: run.repo, runId });
    return run;
  });
}
