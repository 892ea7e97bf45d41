import { NotFoundError } from "../errors";
import { runAdmissionBasis, setQuotaWaitingReason } from "../store/metering/admission-rows";
import { queryableOf, type Db } from "../store/kernel/db";
import type { Admission, EventInput } from "../store/runs/claim";
import type { Queryable } from "../store/kernel/sql";
import { transaction, type Sql } from "../store/kernel/transaction";
import { loadAdmissionFacts, type AdmissionTarget } from "./admission-facts";
import { decideAdmission, type Phase } from "./gate";
import { refusalError, type Refusal } from "./refusal";
import { chargeOpen } from "./usage-counters";
import { quotaWaitingReason } from "./waiting-reason";

/**
 * The one admission gate, for every path that opens a Run or starts an Attempt. The checks
 * and their order live in gate.ts; this file asks them at the right moment, in the right
 * transaction, and charges what an admitted open consumes.
 */

export interface AdmissionDeps {
  /** Told of every refusal of an open (a log line, a metric). */
  onRefusal?: (event: EventInput, refusal: Refusal) => void;
}

/**
 * The gate for opening a Run, as recordAndClaim's (and claimQueued's) `Admission`: asked inside
 * the claim transaction, it refuses with the first token in the fixed order, or admits and
 * charges the open — one Run on the month's counters, one token from each limited rate bucket —
 * in that same transaction. A refusal charges nothing; a rolled-back open gives everything back.
 */
export function admission(deps: AdmissionDeps = {}): Admission {
  return async (sql: Sql, event: EventInput) => {
    const loaded = await loadAdmissionFacts(sql, { repo: event.repo }, ["open"], "lock");
    if (!loaded) return null;
    const refusal = decideAdmission(loaded.facts, ["open"]);
    if (refusal) {
      deps.onRefusal?.(event, refusal);
      return refusal;
    }
    await chargeOpen(sql, loaded);
    return null;
  };
}

const isDb = (on: Db | Sql): on is Db => "pool" in on && "prisma" in on;

/**
 * The gate for starting an Attempt (suspension, the repository's cost quota, the concurrency
 * cap, the installation's cost cap). Writes the answer on the Run: a refused Run keeps its
 * state and says why in `waiting_reason` (`quota:<token>`); an admitted one has a quota reason
 * cleared. Given a Db it runs its own transaction; given a transaction's client it takes the
 * installation's concurrency lock there, so called inside startAttempt's transaction two starts
 * cannot both take the last slot.
 */
export async function admitAttempt(on: Db | Sql, runId: string, known?: KnownRun, concurrencyReserve = 0): Promise<Refusal | null> {
  if (isDb(on)) return transaction(on, (sql) => admitAttemptIn(sql, runId, known, concurrencyReserve));
  return admitAttemptIn(on, runId, known, concurrencyReserve);
}

/** What the caller already read of the Run (startAttempt has it locked): saves the reads. */
export interface KnownRun {
  repo: string;
  waitingReason: string | null;
}

async function admitAttemptIn(sql: Sql, runId: string, known: KnownRun | undefined, concurrencyReserve: number): Promise<Refusal | null> {
  const run = known ?? (await readRun(sql, runId));
  const loaded = await loadAdmissionFacts(sql, { repo: run.repo, runId, concurrencyReserve }, ["attempt"], "lock");
  const refusal = loaded ? decideAdmission(loaded.facts, ["attempt"]) : null;
  const reason = refusal ? quotaWaitingReason(refusal.token) : null;
  // nothing to write when the Run already says it (most starts: no quota reason before, none now)
  if (!known || reason !== known.waitingReason) await setQuotaWaitingReason(sql, runId, reason);
  return refusal;
}

async function readRun(sql: Sql, runId: string): Promise<KnownRun> {
  const run = await runAdmissionBasis(sql, runId);
  if (!run) throw new NotFoundError("run_not_found", `No Run ${runId}.`);
  return run;
}

/**
 * A read-only look at what the gate would answer now (nothing is charged or written): for an
 * API that wants to refuse before it acts, and for the Usage page.
 */
export async function evaluateAdmission(
  db: Db | Queryable,
  target: AdmissionTarget,
  phases: readonly Phase[],
): Promise<Refusal | null> {
  const loaded = await loadAdmissionFacts(queryableOf(db), target, phases, "peek");
  return loaded ? decideAdmission(loaded.facts, phases) : null;
}

/**
 * Throws the refusal as its typed error (403 suspended, 402 with reset_at, 429 with
 * Retry-After) — for API routes, e.g. before an operator's retry takes a worker slot:
 * `await assertAdmitted(db, { repo, runId }, ["attempt"])`.
 */
export async function assertAdmitted(db: Db | Queryable, target: AdmissionTarget, phases: readonly Phase[]): Promise<void> {
  const refusal = await evaluateAdmission(db, target, phases);
  if (refusal) throw refusalError(refusal);
}
