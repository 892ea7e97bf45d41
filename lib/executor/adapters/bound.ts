import type { Bounded } from "./types";

export const DEFAULT_MAX_TOOL_RESULT_BYTES = 4 * 1024;
export const DEFAULT_MAX_TOOL_INPUT_BYTES = 8 * 1024;

/** Keeps at most `maxBytes` bytes of UTF-8 text, cut at a character boundary. */
export function boundText(text: string, maxBytes: number): Bounded {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return { text, cutBytes: 0 };
  let kept = Buffer.from(text).subarray(0, maxBytes).toString("utf8");
  // a character split by the cut decodes as U+FFFD: drop it
  if (kept.endsWith("\uFFFD")) kept = kept.slice(0, -1);
  return { text: kept, cutBytes: bytes - Buffer.byteLength(kept) };
}

/** A tool's input as it is when small, else its JSON text cut (and how much was cut). */
export function boundInput(input: unknown, maxBytes: number): { input: unknown; cutBytes: number } {
  const json = JSON.stringify(input ?? null);
  if (Buffer.byteLength(json) <= maxBytes) return { input: input ?? null, cutBytes: 0 };
  const b = boundText(json, maxBytes);
  return { input: b.text, cutBytes: b.cutBytes };
}

/** "… (1234 more bytes cut)" for display; "" when nothing was cut. */
export function cutNote(cutBytes: number): string {
  return cutBytes > 0 ? `… (${cutBytes} more bytes cut)` : "";
}
