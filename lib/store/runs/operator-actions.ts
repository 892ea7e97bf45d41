import { FROM, TRANSITIONS, type Transition } from "../../engine/run-state";
import { BadInputError, ConflictError } from "../../errors";
import type { Db } from "../kernel/db";
import { audit } from "../people/audit-log";
import { cancelOpenAttempt } from "./attempts";
import { FORGET_ENGINE_FAILURES, isParkedByEngineFailures } from "./engine-failures";
import { guardedRunUpdate, lockRun, type RunRow } from "./run-rows";
import { sql, type Statement } from "../kernel/sql";
import { transaction, type Sql } from "../kernel/transaction";

/** The exclusion constraint `runs_one_open_per_loop_item` says another Run of this Loop is open on the Item. */
function isOpenRunConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === "23P01" && e.constraint === "runs_one_open_per_loop_item";
}

async function reopen(tx: Sql, runId: string, transition: Transition<"Running">, set: Statement, action: string): Promise<RunRow> {
  try {
    // the constraint is deferred to COMMIT for the claim; a reopen wants its answer here
    await tx.query("SET CONSTRAINTS runs_one_open_per_loop_item IMMEDIATE");
    return await guardedRunUpdate(tx, runId, transition, sql`ended_at = NULL${set}`, action);
  } catch (err) {
    if (!isOpenRunConflict(err)) throw err;
    throw new ConflictError("open_run_exists", "Another Run of this Loop is already open on this Item; cancel it first.");
  }
}

/**
 * The session the last Attempt's agent reported, when the Run's agent (after `agent`, an
 * amendment's, null: unchanged) is still the one that ran it: the next Attempts resume it.
 */
const resumeLastSession = (agent: string | null): Statement => sql`, resume_session = (
  SELECT CASE WHEN a.agent IS NOT DISTINCT FROM COALESCE(${agent}::text, runs.agent) THEN a.session_id END
    FROM attempts a WHERE a.run_id = runs.id ORDER BY a.number DESC LIMIT 1)`;

/**
 * Operator retry: a Run parked by engine failures before any Attempt, Waiting → Queued; a
 * Failed one, Failed → Running; the next Attempt (n+1) starts from the pushed branch and
 * resumes the last Attempt's agent session when it reported one.
 */
export async function retryRun(db: Db, runId: string, actor: string): Promise<RunRow> {
  return transaction(db, async (tx) => {
    const locked = await lockRun(tx, runId);
    const run = isParkedByEngineFailures(locked.state, locked.waiting_reason)
      ? await guardedRunUpdate(tx, runId, TRANSITIONS.retryParked, sql`waiting_reason = NULL${FORGET_ENGINE_FAILURES}`, "retry")
      : await reopen(tx, runId, TRANSITIONS.retry, sql`${resumeLastSession(null)}${FORGET_ENGINE_FAILURES}`, "retry");
    await audit(tx, { actor, action: "retry", repo: run.repo, runId });
    return run;
  });
}

export interface RunAmendment {
  prompt?: string;
  agent?: string;
  /** The model, from the agent's roster `model`/`models` (checked by the operator); null: the agent's default; absent: unchanged. */
  model?: string | null;
}

/**
 * Edit and retry: replaces the Run's task text, Agent and/or model, then retries it; every later
 * Attempt uses the amendment. The same agent resumes its last session with the new task as its
 * next message; another agent starts afresh. The model changes only when the amendment names one
 * (the operator checked that the agent offers it, or the Run's model).
 */
export async function editAndRetryRun(db: Db, runId: string, actor: string, amendment: RunAmendment): Promise<RunRow> {
  if (amendment.prompt === undefined && amendment.agent === undefined && amendment.model === undefined) {
    throw new BadInputError("amendment_empty", "Give a new prompt, a new agent or a new model.");
  }
  const agent = amendment.agent ?? null;
  const modelGiven = amendment.model !== undefined;
  return transaction(db, async (tx) => {
    const run = await reopen(
      tx,
      runId,
      TRANSITIONS.editAndRetry,
      sql`, prompt = COALESCE(${amendment.prompt ?? null}, prompt), agent = COALESCE(${agent}, agent),
          model = CASE WHEN ${modelGiven} THEN ${amendment.model ?? null}::text ELSE model END${resumeLastSession(agent)}`,
      "edit and retry",
    );
    await audit(tx, { actor, action: "edit_and_retry", repo: run.repo, runId, detail: amendment });
    return run;
  });
}

/**
 * Operator cancel: any open state becomes Canceled; an open Attempt closes as Canceled (the
 * caller then stops its agent). A Run canceled before its first Attempt gives its cycle
 * reservation back.
 */
export async function cancelRun(db: Db, runId: string, actor: string): Promise<{ run: RunRow; canceledAttempt: string | null }> {
  return transaction(db, async (tx) => {
    await lockRun(tx, runId);
    const run = await guardedRunUpdate(
      tx,
      runId,
      TRANSITIONS.cancel,
      sql`cancel_reason = 'OperatorCanceled', ended_at = now(), waiting_reason = NULL,
          reserved_generation = CASE WHEN state::text = ANY(${FROM.supersede}) THEN NULL ELSE reserved_generation END`,
      "cancel",
    );
    const canceledAttempt = await cancelOpenAttempt(tx, runId);
    await audit(tx, { actor, action: "cancel", repo: run.repo, runId });
    return { run, canceledAttempt };
  });
}

/** Marks the latest failed Attempt as handled; the state does not change. */
export async function resolveFailure(db: Db, runId: string, actor: string): Promise<RunRow> {
  return transaction(db, async (tx) => {
    const run = await guardedRunUpdate(
      tx,
      runId,
      TRANSITIONS.resolveFailure,
      sql`resolved_failure_attempt_id = (SELECT id FROM attempts WHERE run_id = runs.id AND state = 'Failed' ORDER BY number DESC LIMIT 1)`,
      "resolve the failure of",
    );
    await audit(tx, { actor, action: "resolve_failure", repo: run.repo, runId });
    return run;
  });
}
