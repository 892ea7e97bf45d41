import { Redis, type RedisOptions } from "ioredis";
import { BadInputError } from "../errors";

/** The Redis URL: REDIS_URL, or the local default. */
export function redisUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.REDIS_URL || "redis://127.0.0.1:6379";
}

/** The longest wait between two reconnection tries, however long Redis has been away. */
export const RECONNECT_MAX_DELAY_MS = 2_000;

/**
 * When to try reconnecting after `times` failed tries: 50 ms more each time, at most
 * RECONNECT_MAX_DELAY_MS. BullMQ's own default grows to 20 s, so after a 20 s outage its
 * queues and workers came back up to 18 s after Redis did, every job waiting meanwhile.
 */
export const reconnectDelayMs = (times: number): number => Math.min(times * 50, RECONNECT_MAX_DELAY_MS);

/** Connection options for ioredis and BullMQ (BullMQ needs maxRetriesPerRequest: null). */
export function redisOptions(url: string = redisUrl()): RedisOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    maxRetriesPerRequest: null,
    retryStrategy: reconnectDelayMs,
  };
}

/**
 * A new Redis connection; the caller closes it (`quit()`), or the process never exits.
 * `failFast`: a command fails after one reconnection (the web process: a request is answered
 * 503 `queue_unavailable` instead of waiting for Redis forever).
 */
export function createRedis(url?: string, options: { failFast?: boolean } = {}): Redis {
  return new Redis({ ...redisOptions(url), ...(options.failFast ? { maxRetriesPerRequest: 1 } : {}) });
}

/**
 * This instance's namespace in Redis (ATELIER_REDIS_PREFIX, default "atelier"): its BullMQ
 * queues live under `<prefix>:<queue>:…`, its leases under `<prefix>:lease:…`, its control
 * channels are `<prefix>:cancel` and `<prefix>:intervene`. Two instances sharing one Redis
 * need two prefixes (else each takes the other's jobs); all processes of one instance, one.
 */
export function instanceRedisPrefix(env: NodeJS.ProcessEnv = process.env): string {
  const prefix = env.ATELIER_REDIS_PREFIX ?? "atelier";
  if (!/^[A-Za-z0-9_.-]{1,40}$/.test(prefix)) {
    throw new BadInputError("redis_prefix_invalid", `ATELIER_REDIS_PREFIX is "${prefix}": use 1 to 40 letters, digits, '.', '_' or '-'.`);
  }
  return prefix;
}

/** The runner's key prefix (leases, control channels) of this instance. */
export const instanceKeyPrefix = (env?: NodeJS.ProcessEnv): string => `${instanceRedisPrefix(env)}:`;
