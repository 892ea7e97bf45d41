import type { Failure } from "./failure";

/** Attempts counted by Attempt number, not since the last operator retry. */
export const MAX_AUTO_ATTEMPTS = 3;

/**
 * A retryable failure (failure.ts: only an InfraFailure is one) is retried without an operator,
 * while the Attempt number is below 3: the same flag the API, the events and the check run show.
 */
export function canAutoRetry(failure: Pick<Failure, "retryable">, attemptNumber: number): boolean {
  return failure.retryable && attemptNumber < MAX_AUTO_ATTEMPTS;
}

export type RetryDecision = { tag: "RetryAttempt"; nextNumber: number } | { tag: "FailRun" };

export function decideAfterFailure(failure: Failure, attemptNumber: number): RetryDecision {
  return canAutoRetry(failure, attemptNumber) ? { tag: "RetryAttempt", nextNumber: attemptNumber + 1 } : { tag: "FailRun" };
}
