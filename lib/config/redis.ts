import { Redis, type RedisOptions } from "ioredis";
import { redisUrl } from "./database-url";

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
  };
}

/** A new Redis connection; the caller closes it (`quit()`), or the process never exits. */
export function createRedis(url?: string): Redis {
  return new Redis(redisOptions(url));
}
