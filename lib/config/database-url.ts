/** The PostgreSQL URL: DATABASE_URL, or the local default. */
export function databaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/atelier";
}

/** The Redis URL: REDIS_URL, or the local default. */
export function redisUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.REDIS_URL || "redis://127.0.0.1:6379";
}
