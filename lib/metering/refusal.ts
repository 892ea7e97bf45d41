import { AtelierError, ForbiddenError, QuotaError, RateLimitError } from "../errors";

/**
 * The admission gate's refusals, in the one order the gate asks them. The first that applies
 * is the answer, so an installation over several limits always reads the earliest token (over both
 * monthly limits, the run quota's).
 */
export const ADMISSION_ORDER = [
  "installation_suspended",
  "repo_quota_exceeded",
  "concurrency_cap_exceeded",
  "rate_limited",
  "monthly_run_quota_exceeded",
  "monthly_cost_cap_exceeded",
] as const;
export type AdmissionToken = (typeof ADMISSION_ORDER)[number];

export function isAdmissionToken(s: string): s is AdmissionToken {
  return (ADMISSION_ORDER as readonly string[]).includes(s);
}

export interface Refusal {
  token: AdmissionToken;
  /** A sentence for people: what limit, how far, and what lifts it. */
  message: string;
  /** When asking again may succeed; null when only a person can lift the refusal. */
  retryAfterSeconds: number | null;
  /** For the API body: scope, limit, used, reset_at (ISO) where they apply. */
  details: Record<string, unknown>;
}

/** The typed error an API answers with: 403 suspended, 402 monthly limits, 429 rate and concurrency. */
export function refusalError(r: Refusal): AtelierError {
  switch (r.token) {
    case "installation_suspended":
      return new ForbiddenError(r.token, r.message, r.details);
    case "concurrency_cap_exceeded":
    case "rate_limited":
      return new RateLimitError(r.token, r.message, r.retryAfterSeconds ?? 30, r.details);
    case "repo_quota_exceeded":
    case "monthly_cost_cap_exceeded":
    case "monthly_run_quota_exceeded":
      return new QuotaError(r.token, r.message, r.details);
  }
}

/** A sentence for a stored token alone (Needs you, check runs), when the numbers are gone. */
export function tokenSentence(token: string): string {
  switch (token) {
    case "installation_suspended":
      return "The GitHub App installation is suspended; unsuspend it on GitHub to run agents again.";
    case "repo_quota_exceeded":
      return "This repository used its monthly quota; it resets at the start of next month (UTC), or an admin can raise it on the Usage page.";
    case "concurrency_cap_exceeded":
      return "As many Runs as the concurrency cap allows are already running; this one waits for a slot.";
    case "rate_limited":
      return "Too many Runs were opened in the last minute; this one is tried again shortly.";
    case "monthly_cost_cap_exceeded":
      return "The installation reached its monthly cost cap; it resets at the start of next month (UTC), or an admin can raise it on the Usage page.";
    case "monthly_run_quota_exceeded":
      return "The installation opened as many Runs as its monthly quota allows; it resets at the start of next month (UTC), or an admin can raise it on the Usage page.";
    default:
      return `Refused: ${token}.`;
  }
}
