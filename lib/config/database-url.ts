// the store reads its own URL (lib/store must not import lib/config); kept here beside Redis's for the rest
export { databaseUrl } from "../store/database-url";

/** The Redis URL: REDIS_URL, or the local default. */
export function redisUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.REDIS_URL || "redis://127.0.0.1:6379";
}
