/**
 * Typed failures. Every failed Attempt carries a kind, a category and `retryable` (whether
 * trying the same work again is reasonable); only an InfraFailure is retried without an
 * operator (see retry.ts).
 */

export const FAILURE_KINDS = ["InfraFailure", "DefectFailure", "AgentFailure", "RunawayFailure", "BudgetFailure"] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** Categories, and whether each is worth trying again. */
export const CATEGORY_RETRYABLE = {
  authentication: false,
  configuration: false,
  timeout: true,
  rate_limit: true,
  transport: true,
  lease_lost: true,
  tool_error: false,
  agent_exit: false,
  /** The agent used up its turns (the roster's max_turns) before it finished. */
  step_limit: false,
  quota: false,
  internal: false,
} as const satisfies Record<string, boolean>;
export type FailureCategory = keyof typeof CATEGORY_RETRYABLE;

export interface Failure {
  kind: FailureKind;
  category: FailureCategory;
  retryable: boolean;
  message: string;
}

export function failure(kind: FailureKind, category: FailureCategory, message: string): Failure {
  return { kind, category, retryable: CATEGORY_RETRYABLE[category], message };
}

/** The machine or the network failed us: a lost lease, a dead worker, a push refused by a 5xx. */
export const infraFailure = (category: FailureCategory, message: string) => failure("InfraFailure", category, message);
/** Atelier itself is wrong (a bug, an impossible state). */
export const defectFailure = (message: string) => failure("DefectFailure", "internal", message);
/** The agent ran and failed: a non-zero exit, a missing credential, an unusable result. */
export const agentFailure = (category: FailureCategory, message: string) => failure("AgentFailure", category, message);
/** The agent outlived its limit (max_attempt_minutes). */
export const runawayFailure = (message: string) => failure("RunawayFailure", "timeout", message);
/** A budget or quota stopped the Attempt. */
export const budgetFailure = (message: string) => failure("BudgetFailure", "quota", message);

export function isFailureKind(s: string): s is FailureKind {
  return (FAILURE_KINDS as readonly string[]).includes(s);
}

export function isFailureCategory(s: string): s is FailureCategory {
  return Object.hasOwn(CATEGORY_RETRYABLE, s);
}
