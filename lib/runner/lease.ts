import { metrics } from "../metrics/metrics";
import { createHash, randomUUID } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * The lease an Attempt runs under: one Redis key per Run whose value is the holder's token.
 * Taken with SET NX PX, renewed by a heartbeat every TTL/3 with a compare-and-pexpire (only the
 * holder renews), released with a compare-and-delete. The holder stops its agent and writes
 * nothing once it cannot prove it still holds the key: another token is there, or no renewal
 * succeeded for a whole TTL (Redis unreachable). The Attempt row stores the same token, so the
 * store refuses a late outcome (`lease_lost`).
 */

/**
 * 30 s: a holder keeps its lease through a Redis outage of about 20 s (its agent goes on). A
 * dead worker of another host is known dead only once its lease and heartbeat expire, about
 * one TTL; one of this host is found at once by its pid (own-host-recovery.ts).
 */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** Why a holder stopped holding its lease. */
export type LeaseLossReason = "taken" | "expired";

/**
 * Renews the holder's key. 1: renewed. 2: the key was gone although our last renewal was
 * still within its TTL (Redis lost it: FLUSHALL, a failover without persistence), so nobody
 * else can hold it: it is set again. 0: someone else holds it.
 */
const RENEW = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if v == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** Runs a script by its digest, sending its text only when Redis does not know it yet. */
async function runScript(redis: Redis, script: { text: string; sha: string }, key: string, ...args: string[]): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, 1, key, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
    return redis.eval(script.text, 1, key, ...args);
  }
}

const script = (text: string) => ({ text, sha: createHash("sha1").update(text).digest("hex") });
const RENEW_SCRIPT = script(RENEW);
const RELEASE_SCRIPT = script(RELEASE);

export interface LeaseOptions {
  ttlMs: number;
  /** Default TTL/3. */
  renewEveryMs?: number;
  /** Called once when the lease is lost (not when it is released). */
  onLost?: (reason: LeaseLossReason) => void;
}

export interface Lease {
  readonly key: string;
  readonly token: string;
  /** Aborted when the lease is lost; its reason is the LeaseLossReason. */
  readonly lost: AbortSignal;
  /** Stops the heartbeat and deletes the key if it is still ours. */
  release(): Promise<void>;
  /** Stops the heartbeat and leaves the key to expire (a hard stop: the next start recovers). */
  abandon(): void;
}

/** A fresh, unguessable lease token; given its holder's worker id, it names it first (`<worker>/<uuid>`). */
export const newLeaseToken = (workerId?: string): string => (workerId ? `${workerId}/${randomUUID()}` : randomUUID());

/** The worker a lease token names, or null (a token taken without one). */
export function leaseTokenWorker(token: string): string | null {
  const slash = token.lastIndexOf("/");
  return slash > 0 ? token.slice(0, slash) : null;
}

/** Takes the lease if nobody holds it; null when it is held. The heartbeat starts at once. */
export async function acquireLease(redis: Redis, key: string, options: LeaseOptions, token = newLeaseToken()): Promise<Lease | null> {
  const sentAt = Date.now();
  const ok = await redis.set(key, token, "PX", options.ttlMs, "NX");
  if (ok !== "OK") return null;
  return holdLease(redis, key, token, sentAt, options);
}

function holdLease(redis: Redis, key: string, token: string, acquiredAt: number, options: LeaseOptions): Lease {
  const { ttlMs } = options;
  const every = options.renewEveryMs ?? Math.max(1, Math.floor(ttlMs / 3));
  const controller = new AbortController();
  // The key is ours until validUntil: every successful renewal was sent before it pushes it on.
  let validUntil = acquiredAt + ttlMs;
  let inFlight = false;
  let stopped = false;

  const lose = (reason: LeaseLossReason) => {
    if (controller.signal.aborted) return;
    stop();
    controller.abort(reason);
    metrics.leaseLosses.inc({ reason });
    options.onLost?.(reason);
  };
  // Redis may not answer at all (commands queue while it reconnects): the deadline decides.
  let deadline = setTimeout(() => lose("expired"), ttlMs);
  const armDeadline = () => {
    clearTimeout(deadline);
    deadline = setTimeout(() => lose("expired"), Math.max(0, validUntil - Date.now()));
  };

  const renew = async () => {
    if (inFlight || stopped) return;
    inFlight = true;
    const sentAt = Date.now();
    try {
      if (sentAt >= validUntil) return lose("expired");
      const answer = Number(await runScript(redis, RENEW_SCRIPT, key, token, String(ttlMs)));
      if (stopped) {
        // answered after the deadline lost the lease (Redis away): the key it renewed or set
        // again is given back at once, not left to block the Attempt's retry for a whole TTL
        if (controller.signal.aborted && answer !== 0) await runScript(redis, RELEASE_SCRIPT, key, token).catch(() => undefined);
        return;
      }
      if (answer === 0) return lose("taken");
      // a key set again after our own validity ran out could have been someone else's meanwhile
      if (answer === 2 && sentAt >= validUntil) {
        await runScript(redis, RELEASE_SCRIPT, key, token).catch(() => undefined);
        return lose("expired");
      }
      validUntil = sentAt + ttlMs;
      armDeadline();
    } catch {
      // Redis did not answer: keep trying until the deadline says the key may be gone
    } finally {
      inFlight = false;
    }
  };
  const timer = setInterval(() => void renew(), every);
  // a SET answered late (sent while Redis was away, answered once it came back) leaves less
  // than a renewal period of validity: renewed at once, not lost before the first renewal
  if (validUntil - Date.now() < ttlMs - every) void renew();

  function stop() {
    stopped = true;
    clearInterval(timer);
    clearTimeout(deadline);
  }

  return {
    key,
    token,
    lost: controller.signal,
    async release() {
      if (stopped) return;
      stop();
      await runScript(redis, RELEASE_SCRIPT, key, token).catch(() => undefined);
    },
    abandon() {
      stop();
    },
  };
}

/** The token holding a lease key, or null. */
export async function leaseHolder(redis: Redis, key: string): Promise<string | null> {
  return redis.get(key);
}

/** Deletes a lease key only while `token` holds it (its holder is known dead): true when it was deleted. */
export async function releaseLeaseOf(redis: Redis, key: string, token: string): Promise<boolean> {
  return Number(await runScript(redis, RELEASE_SCRIPT, key, token)) === 1;
}

/** The holders of many lease keys at once (null where nobody holds it). */
export async function leaseHolders(redis: Redis, keys: readonly string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  return redis.mget(...keys);
}
