import { OUTAGE_RETRY_AFTER_SECONDS, outageOf } from "../errors";
import { maskSecrets } from "../secrets/redact";
import { recordEngineFailure } from "../store/runs/engine-failures";
import { isDatabaseOutage } from "./hold-through-outage";
import type { MoveOutcome } from "./move-run";
import type { RunnerContext } from "./runner-context";

/**
 * A move of a Run that throws is an engine failure (Atelier's own: the agent's failures are
 * outcomes, never throws): it is counted on the Run with its error and tried again after a
 * backoff; at the limit the Run is parked for an operator (lib/store/runs/engine-failures.ts).
 * An outage of Postgres or Redis is no engine failure and counts nothing: the Run is moved
 * again a few seconds later, for as long as the outage lasts (a job that merely failed would
 * leave the Run to the next reconcile, minutes later). A worker that dies while it moves a
 * Run (its job is found abandoned) counts one engine failure too: a Run whose job crashes its
 * worker every time is parked after N, not moved forever.
 */

/** The wait before the next move after the nth engine failure: 1 s, 2 s, 4 s… at most a minute. */
export const engineFailureBackoffMs = (failures: number): number => Math.min(60_000, 1_000 * 2 ** Math.max(0, failures - 1));

/** The wait before a move that met an outage is tried again (what a client is told, too). */
export const OUTAGE_RETRY_MS = OUTAGE_RETRY_AFTER_SECONDS * 1000;

export async function countingEngineFailures(ctx: RunnerContext, runId: string, move: () => Promise<MoveOutcome>): Promise<MoveOutcome> {
  try {
    return await move();
  } catch (err) {
    if (isDatabaseOutage(ctx.deps.db, err) || outageOf(err) !== null) {
      ctx.log.warn({ runId, retryInMs: OUTAGE_RETRY_MS, err: err instanceof Error ? err.message : String(err) }, "Postgres or Redis is away: the Run is moved again shortly");
      return { tag: "Again", reason: "outage", delayMs: OUTAGE_RETRY_MS };
    }
    const error = maskSecrets(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    const recorded = await recordEngineFailure(ctx.deps.db, runId, error).catch(() => null);
    if (!recorded) throw err;
    ctx.log.error({ runId, failures: recorded.failures, parked: recorded.parked, err: error }, "moving a Run failed inside Atelier");
    if (recorded.parked) return { tag: "Idle", reason: "engine_failed" };
    return { tag: "Again", reason: "engine_failure", delayMs: engineFailureBackoffMs(recorded.failures) };
  }
}

/** The error kept on a Run whose job was found abandoned by its dead worker. */
export const WORKER_DIED_ERROR = "WorkerDied: the worker moving this Run died while it held the Run's job (the job was found abandoned and moved again)";

/** A worker died holding the Run's job: one engine failure (parked at the limit, the next move finds it so). */
export async function countWorkerDeath(ctx: RunnerContext, runId: string): Promise<void> {
  const recorded = await recordEngineFailure(ctx.deps.db, runId, WORKER_DIED_ERROR);
  if (recorded) ctx.log.warn({ runId, failures: recorded.failures, parked: recorded.parked }, "a worker died while it moved this Run");
}
