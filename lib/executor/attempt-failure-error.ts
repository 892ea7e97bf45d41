import type { Failure } from "../engine/failure";

/**
 * Carries a typed Failure out of a step of the executor (workspace, harvest, agent set-up) to
 * `executeAttempt`, which turns it into a Failed outcome.
 */
export class AttemptFailureError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
    this.name = "AttemptFailureError";
  }
}

/** The push found the Run's branch moved since the Attempt began; nothing was overwritten. */
export class BranchMovedError extends AttemptFailureError {
  constructor(failure: Failure) {
    super(failure);
    this.name = "BranchMovedError";
  }
}
