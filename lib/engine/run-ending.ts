import { isClosed } from "./run-predicates";
import { isRetryableCategory } from "./failure";

/**
 * How a Run ended, as every door tells it (the Run API, the outbound events, the check run):
 * `closed` is the terminal set (run-predicates.ts: Succeeded, Failed, Canceled — poll for it, not
 * for Succeeded alone), and every closed Run that did not succeed carries a category: a Failed
 * Run its last Attempt's failure's (with the `retryable` stored with it, the category's: what
 * Atelier retries by itself, failure.ts), a Canceled Run `canceled`.
 */
export interface RunEnding {
  closed: boolean;
  category: string | null;
  retryable: boolean | null;
}

export function runEnding(state: string, lastFailure: { category: string | null; retryable: boolean | null } | null): RunEnding {
  if (!isClosed(state)) return { closed: false, category: null, retryable: null };
  if (state === "Canceled") return { closed: true, category: "canceled", retryable: isRetryableCategory("canceled") };
  if (state !== "Failed") return { closed: true, category: null, retryable: null };
  return { closed: true, category: lastFailure?.category ?? "internal", retryable: lastFailure?.retryable ?? false };
}
