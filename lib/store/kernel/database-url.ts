/** The PostgreSQL URL: DATABASE_URL, or the local default. */
export function databaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/atelier";
}
