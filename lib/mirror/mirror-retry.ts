import { GitHubCallError } from "./github-client";

/**
 * How a failed mirror sync is tried again. The mirror runs in its own queue, so waiting never
 * holds the engine: GitHub's `retry-after` (or rate limit reset) is honoured, else the delay
 * doubles from one second up to five minutes.
 */
export const MIRROR_TRIES = 10;
const FIRST_DELAY_MS = 1_000;
const MAX_BACKOFF_MS = 5 * 60_000;
/** A rate limit reset further out than this is retried then, and again later if still limited. */
const MAX_WAIT_MS = 30 * 60_000;

/** Whether trying the sync again may help: GitHub's refusals (a 4xx) will not go away by waiting. */
export function isRetryableMirrorError(err: unknown): boolean {
  return !(err instanceof GitHubCallError) || err.retryable;
}

/** The delay before try `triesMade + 1`. */
export function mirrorRetryDelayMs(triesMade: number, err: unknown): number {
  if (err instanceof GitHubCallError && err.retryAfterMs !== null) return Math.min(MAX_WAIT_MS, err.retryAfterMs + 250);
  return Math.min(MAX_BACKOFF_MS, FIRST_DELAY_MS * 2 ** Math.max(0, triesMade - 1));
}
