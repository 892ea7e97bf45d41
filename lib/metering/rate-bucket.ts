/**
 * The open-Run rate limit: a token bucket per scope holding at most `perMinute` tokens and
 * refilled at `perMinute` tokens a minute. Pure arithmetic; the bucket rows live in Postgres
 * (`rate_buckets`), so a rolled-back open gives its token back with everything else.
 */

/** Tokens available after `elapsedSeconds` since the bucket held `tokens`. */
export function refill(tokens: number, elapsedSeconds: number, perMinute: number): number {
  return Math.min(perMinute, tokens + (Math.max(0, elapsedSeconds) * perMinute) / 60);
}

/** Seconds until one whole token is available (0 when one is). */
export function secondsUntilToken(available: number, perMinute: number): number {
  return available >= 1 ? 0 : Math.max(1, Math.ceil(((1 - available) * 60) / perMinute));
}
