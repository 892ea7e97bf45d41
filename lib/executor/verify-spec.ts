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

/** The verify keys of an `environment:` block, as zod reads them (spread into the block's schema). */
export const verifyFieldsShape = {
  verify: z.string().trim().min(1).max(4_000).optional(),
  on_verify_failure: z.enum(VERIFY_FAILURE_ACTIONS).optional(),
  max_verify_rounds: z.number().int().min(1).max(MAX_MAX_VERIFY_ROUNDS).optional(),
};

export const VERIFY_KEYS = Object.keys(verifyFieldsShape) as (keyof typeof verifyFieldsShape)[];

export type VerifyFields = z.infer<z.ZodObject<typeof verifyFieldsShape>>;

/** A declared verify, defaults filled in. */
export interface VerifySpec {
  /** Shell, run by /bin/sh -c at the root of a fresh checkout of the harvested commit. */
  command: string;
  onFailure: VerifyFailureAction;
  /** With `retry`: how many times at most the agent is resumed with verify's failure. */
  maxRounds: number;
}

/**
 * The verify a Loop runs: its own `environment:` keys over the file's top-level ones, key by
 * key; null when neither declares `verify:`.
 */
export function resolveVerify(top: VerifyFields, loop: VerifyFields): VerifySpec | null {
  const command = loop.verify ?? top.verify;
  if (command === undefined) return null;
  return {
    command,
    onFailure: loop.on_verify_failure ?? top.on_verify_failure ?? DEFAULT_VERIFY_FAILURE_ACTION,
    maxRounds: loop.max_verify_rounds ?? top.max_verify_rounds ?? DEFAULT_MAX_VERIFY_ROUNDS,
  };
}

/** Whether a stored value is a VerifySpec (an Event's submission is JSON of any age). */
export function isVerifySpec(value: unknown): value is VerifySpec {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.command === "string" &&
    v.command.trim() !== "" &&
    (VERIFY_FAILURE_ACTIONS as readonly unknown[]).includes(v.onFailure) &&
    typeof v.maxRounds === "number" &&
    Number.isInteger(v.maxRounds) &&
    v.maxRounds >= 1 &&
    v.maxRounds <= MAX_MAX_VERIFY_ROUNDS
  );
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
