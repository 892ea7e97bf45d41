import type { Failure } from "./failure";

/** Attempts counted by Attempt number, not since the last operator retry. */
export const MAX_AUTO_ATTEMPTS = 3;

/** Only an InfraFailure is retried without an operator, while the Attempt number is below 3. */
export function canAutoRetry(failure: Failure, attemptNumber: number): boolean {
  return failure.kind === "InfraFailure" && attemptNumber < MAX_AUTO_ATTEMPTS;
}

export type RetryDecision = { tag: "RetryAttempt"; nextNumber: number } | { tag: "FailRun" };

export function decideAfterFailure(failure: Failure, attemptNumber: number): RetryDecision {
  return canAutoRetry(failure, attemptNumber) ? { tag: "RetryAttempt", nextNumber: attemptNumber + 1 } : { tag: "FailRun" };
}
