import { z } from "zod";

/**
 * How a repository asks Atelier to check the agent's work: the `verify`, `on_verify_failure`
 * and `max_verify_rounds` keys of an `environment:` block in `.github/atelier.yml` (at the top
 * and per Loop), and what the check found. Pure data: it is stored with the Run's Event and on
 * its Attempts as JSON.
 */

export const VERIFY_FAILURE_ACTIONS = ["draft", "retry"] as const;
export type VerifyFailureAction = (typeof VERIFY_FAILURE_ACTIONS)[number];

export const DEFAULT_VERIFY_FAILURE_ACTION: VerifyFailureAction = "draft";
export const DEFAULT_MAX_VERIFY_ROUNDS = 1;
export const MAX_MAX_VERIFY_ROUNDS = 5;

/** The verify keys of an `environment:` block, as zod reads them (spread into the block's schema, loops/validate/environment.ts). */
export const verifyFieldsShape = {
  verify: z.string().trim().min(1).max(4_000).optional(),
  on_verify_failure: z.enum(VERIFY_FAILURE_ACTIONS).optional(),
  max_verify_rounds: z.number().int().min(1).max(MAX_MAX_VERIFY_ROUNDS).optional(),
};

/** A declared verify, defaults filled in. */
export interface VerifySpec {
  /** Shell, run by /bin/sh -c at the root of a fresh checkout of the harvested commit. */
  command: string;
  onFailure: VerifyFailureAction;
  /** With `retry`: how many times at most the agent is resumed with verify's failure. */
  maxRounds: number;
}

/** The verify of a Loop's environment, defaults filled in; null when it declares no `verify:`. */
export function verifySpecOf(
  environment: { verify: string | null; onVerifyFailure: VerifyFailureAction | null; maxVerifyRounds: number | null } | null | undefined,
): VerifySpec | null {
  if (!environment?.verify) return null;
  return {
    command: environment.verify,
    onFailure: environment.onVerifyFailure ?? DEFAULT_VERIFY_FAILURE_ACTION,
    maxRounds: environment.maxVerifyRounds ?? DEFAULT_MAX_VERIFY_ROUNDS,
  };
}

/** What one run of verify found. */
export interface VerifyCheck {
  passed: boolean;
  /** The shell's exit code; null when it was killed (timed_out, or a signal). */
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** The last lines of its output, redacted and bounded (VERIFY_TAIL_*). */
  tail: string;
}

/** What an Attempt's verify came to: its last check, after `rounds` runs of verify. */
export interface VerifyResult extends VerifyCheck {
  command: string;
  /** How many times verify ran (1 + the agent's resumed rounds). */
  rounds: number;
}

/** How an Attempt that the agent finished ended, as the Run and its events say it. */
export type VerifyVerdict = "passed" | "failed" | "not_declared";

export const verifyVerdict = (v: Pick<VerifyResult, "passed"> | null): VerifyVerdict => (v === null ? "not_declared" : v.passed ? "passed" : "failed");

/** The longest tail kept: lines and characters. */
export const VERIFY_TAIL_LINES = 40;
export const VERIFY_TAIL_CHARS = 4_000;

/** Whether a stored value is a VerifyResult (a column of JSON, of any age). */
export function isVerifyResult(value: unknown): value is VerifyResult {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.passed === "boolean" &&
    typeof v.command === "string" &&
    typeof v.durationMs === "number" &&
    typeof v.tail === "string" &&
    typeof v.rounds === "number" &&
    typeof v.timedOut === "boolean" &&
    (v.exitCode === null || typeof v.exitCode === "number")
  );
}

/** A stored verify, read back; null when there is none (or it is not one). */
export const storedVerify = (value: unknown): VerifyResult | null => (isVerifyResult(value) ? value : null);
