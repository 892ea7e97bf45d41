/**
 * Typed failures. Every non-success ending carries a kind, a category and `retryable`. The
 * category decides `retryable`, and `retryable` decides the automatic retry (retry.ts): a
 * retryable failure is one Atelier retries without an operator, so the flag the API, the
 * outbound events and the check run show is what Atelier does. Each kind takes only the
 * categories of its own side of that line: an InfraFailure is always retryable, the others never.
 * The categories and their tokens: docs/operating.md ("Failure categories"); ADR 0079.
 */

export const FAILURE_KINDS = ["InfraFailure", "DefectFailure", "AgentFailure", "RunawayFailure", "BudgetFailure"] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** Categories, and whether Atelier tries the same work again by itself. */
export const CATEGORY_RETRYABLE = {
  /** A credential was refused (the model API's key, git's token). */
  authentication: false,
  /** The agent, its roster entry or the Loop is not runnable as configured. */
  configuration: false,
  /** The model the agent asked for is not one the model API knows. */
  invalid_model: false,
  /** The model API, through the gateway, rate limited the request or was overloaded (429, 529). */
  gateway_rate_limit: true,
  /** The model API did not answer in time (504, a timed-out request). */
  gateway_timeout: true,
  /** The model API failed (another 5xx) or could not be reached through the gateway. */
  gateway_error: true,
  /** An MCP server of the roster did not start or list its tools. */
  mcp_discovery: false,
  /** A call to an MCP server failed in transport mid-run (the server went away). */
  mcp_transport: true,
  /** The model asked for a tool the roster does not permit. */
  tool_denied: false,
  /** The agent used up its turns (the roster's max_turns) before it finished. */
  step_limit: false,
  /** The agent outlived max_attempt_minutes; run again it would likely do so again. */
  timeout: false,
  /** Atelier's own network failed: git or GitHub could not be reached, a branch moved under the push. */
  transport: true,
  /** git failed in a way Atelier does not recognise (a lock, a local fault): tried again. */
  git_error: true,
  /** The worker lost the Attempt (a dead worker, a lost lease). */
  lease_lost: true,
  /** The agent exited with an error of its own. */
  agent_exit: false,
  /** The agent spent the budget the roster gives it (its child sessions). */
  budget: false,
  /** The category of a Canceled Run (no Attempt failed): an operator, a newer Event or the Loop's if: ended it. */
  canceled: false,
  /** Atelier itself is wrong. */
  internal: false,
} as const satisfies Record<string, boolean>;
export type FailureCategory = keyof typeof CATEGORY_RETRYABLE;

type CategoryWhere<R extends boolean> = { [C in FailureCategory]: (typeof CATEGORY_RETRYABLE)[C] extends R ? C : never }[FailureCategory];
/** The categories Atelier retries by itself: only an InfraFailure has one. */
export type RetryableCategory = CategoryWhere<true>;
export type FinalCategory = CategoryWhere<false>;

export interface Failure {
  kind: FailureKind;
  category: FailureCategory;
  retryable: boolean;
  message: string;
}

/** The one predicate of `retryable`: what the category says. */
export const isRetryableCategory = (category: FailureCategory): boolean => CATEGORY_RETRYABLE[category];

function failure(kind: FailureKind, category: FailureCategory, message: string): Failure {
  return { kind, category, retryable: isRetryableCategory(category), message };
}

/** The machine or the network failed us: a lost lease, a dead worker, a push refused by a 5xx. */
export const infraFailure = (category: RetryableCategory, message: string) => failure("InfraFailure", category, message);
/** Atelier itself is wrong (a bug, an impossible state). */
export const defectFailure = (message: string) => failure("DefectFailure", "internal", message);
/** The agent ran and failed: a non-zero exit, a missing credential, an unusable result. */
export const agentFailure = (category: Exclude<FinalCategory, "internal" | "timeout" | "budget" | "canceled">, message: string) =>
  failure("AgentFailure", category, message);
/** The agent outlived its limit (max_attempt_minutes). */
export const runawayFailure = (message: string) => failure("RunawayFailure", "timeout", message);
/** The agent spent its budget (the roster's max_child_sessions). */
export const budgetFailure = (message: string) => failure("BudgetFailure", "budget", message);

export function isFailureKind(s: string): s is FailureKind {
  return (FAILURE_KINDS as readonly string[]).includes(s);
}

export function isFailureCategory(s: string): s is FailureCategory {
  return Object.hasOwn(CATEGORY_RETRYABLE, s);
}
