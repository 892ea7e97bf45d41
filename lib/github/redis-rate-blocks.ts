import type { Redis } from "ioredis";
import type { RateResource, SharedRateBlocks } from "./rate-limit";

/** Keeps the later of two blocks; the key expires when its block ends. */
const BLOCK = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1])
end
return 0`;

/** Rate-limit blocks shared through Redis, one key per caller and resource under `keyPrefix`. */
export function redisRateBlocks(redis: Redis, keyPrefix: string): SharedRateBlocks {
  const key = (caller: string, resource: RateResource) => `${keyPrefix}ratelimit:${caller}:${resource}`;
  return {
    async blockedUntil(caller, resource) {
      return Number((await redis.get(key(caller, resource))) ?? 0);
    },
    async block(caller, resource, until) {
      await redis.eval(BLOCK, 1, key(caller, resource), String(Math.ceil(until)));
    },
  };
}
