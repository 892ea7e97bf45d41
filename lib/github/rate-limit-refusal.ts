type Headers = Record<string, string | number | undefined>;

/**
 * What a GitHub answer says about rate limits — the one reading of it Atelier has:
 * - `primary`: the hourly budget is spent (403/429 with `x-ratelimit-remaining: 0`), wait until `resetAt`;
 * - `secondary`: too many or too fast requests: 403/429 with `retry-after`, or without it (a 429,
 *   or a 403 whose message names the secondary limit) — then `retryAfterMs` is null and the
 *   caller backs off on its own (at least a minute, then longer);
 * - null: not a rate limit (a 403 of permissions is a refusal that waiting does not cure).
 */
export type RateLimitRefusal = { kind: "primary"; resetAt: number | null } | { kind: "secondary"; retryAfterMs: number | null };

/** GitHub: after a secondary limit that names no wait, wait at least a minute. */
export const SECONDARY_BACKOFF_MS = 60_000;

const SECONDARY_MESSAGE = /secondary rate limit|abuse detection/i;

export function rateLimitRefusal(status: number, headers: Headers, message = ""): RateLimitRefusal | null {
  if (status !== 403 && status !== 429) return null;
  const remaining = numberHeader(headers, "x-ratelimit-remaining");
  const retryAfter = numberHeader(headers, "retry-after");
  if (retryAfter !== null) return { kind: "secondary", retryAfterMs: Math.max(0, retryAfter * 1000) };
  if (remaining === 0) {
    const reset = numberHeader(headers, "x-ratelimit-reset");
    return { kind: "primary", resetAt: reset === null ? null : reset * 1000 };
  }
  if (status === 429 || SECONDARY_MESSAGE.test(message)) return { kind: "secondary", retryAfterMs: null };
  return null;
}

export function numberHeader(headers: Headers, name: string): number | null {
  const value = headers[name];
  if (value === undefined || value === "") return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}
