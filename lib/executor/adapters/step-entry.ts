import type { TranscriptStep } from "./types";

/**
 * How a transcript step is stored: one transcript entry of stream "step" whose text is the
 * step as JSON. The raw lines stay entries of their own streams (stdout, stderr), for download.
 */

export const STEP_STREAM = "step";

const STEP_TYPES: ReadonlySet<string> = new Set<TranscriptStep["type"]>([
  "session",
  "text",
  "thinking",
  "tool_call",
  "tool_result",
  "retry",
  "error",
  "final",
  "output",
]);

export function encodeStep(step: TranscriptStep): { stream: typeof STEP_STREAM; text: string } {
  return { stream: STEP_STREAM, text: JSON.stringify(step) };
}

/** The step a stored entry holds; null for anything else (a raw line, a malformed entry). */
export function decodeStep(entry: { stream: string; text: string }): TranscriptStep | null {
  if (entry.stream !== STEP_STREAM) return null;
  try {
    const value = JSON.parse(entry.text) as { type?: unknown } | null;
    return value && typeof value === "object" && typeof value.type === "string" && STEP_TYPES.has(value.type) ? (value as TranscriptStep) : null;
  } catch {
    return null;
  }
}
