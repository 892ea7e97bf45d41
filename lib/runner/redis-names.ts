/**
 * The Redis names the runner uses, under one prefix (default `atelier:`) so that tests and
 * side-by-side instances on one Redis keep apart. Pub/sub channels are not keys: FLUSHALL does
 * not touch them, and nothing in them needs rebuilding.
 */
export const DEFAULT_KEY_PREFIX = "atelier:";

export interface RedisNames {
  /** The lease of the Attempt running for a Run. */
  lease(runId: string): string;
  /** Operator cancels: `{ runId, attemptId }`; the worker running it stops its agent. */
  cancelChannel: string;
  /** Operator interventions: `{ runId, auditId }`; the worker running it writes the audited text to the agent's stdin. */
  interveneChannel: string;
  /** Why an Attempt's outcome was not recorded (the database was away): the sweep's reason when it closes it. */
  unrecordedOutcome(attemptId: string): string;
  /** An Attempt the orphan sweep found unheld while its worker looked alive: the key's age, by Redis's clock, is how long it has been so. */
  orphanSuspect(attemptId: string): string;
  /** A key set once the schedulers are in Redis: gone means Redis lost its data (rebuild-guard.ts). */
  rebuiltMarker: string;
}

export function redisNames(prefix: string = DEFAULT_KEY_PREFIX): RedisNames {
  return {
    lease: (runId) => `${prefix}lease:run:${runId}`,
    unrecordedOutcome: (attemptId) => `${prefix}unrecorded:${attemptId}`,
    orphanSuspect: (attemptId) => `${prefix}suspect:${attemptId}`,
    cancelChannel: `${prefix}cancel`,
    interveneChannel: `${prefix}intervene`,
    rebuiltMarker: `${prefix}rebuilt`,
  };
}
