import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/client";
import { databaseUrl } from "./database-url";
import type { Queryable } from "./sql";

/**
 * One pg pool per process, shared by the engine's SQL (guarded transitions, the claim) and by
 * Prisma's typed reads.
 */
export interface Db {
  pool: pg.Pool;
  prisma: PrismaClient;
  close(): Promise<void>;
}

// BIGINT (installation and repository ids) as JS numbers: GitHub ids fit in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * Session settings of every connection. `jit=off`: Atelier's queries are short, and Postgres
 * judges by estimated cost whether to compile one; once `runs` holds some 60,000 rows the
 * Board's query crosses that line and spent 28 ms of its 48 compiling (npm run bench).
 */
const SESSION_OPTIONS = "-c jit=off";

/**
 * A pool's connection settings: the URL's own `options` (a test's search_path), then
 * `options`. The driver takes a URL's `options` over the pool's, so both go into the URL.
 */
function withSessionOptions(url: string, options: string): { connectionString: string; options?: string } {
  if (!URL.canParse(url)) return { connectionString: url, options };
  const withOptions = new URL(url);
  const own = withOptions.searchParams.get("options");
  withOptions.searchParams.set("options", own ? `${own} ${options}` : options);
  return { connectionString: withOptions.toString() };
}

/**
 * The schema Prisma names its tables in: it qualifies every table, where the store's SQL finds
 * them by the connection's search_path. The URL's `schema` parameter, else the first schema of
 * a `-c search_path=…` in its `options` (the tests' isolated schemas), else public.
 */
export function prismaSchemaOf(url: string): string {
  if (!URL.canParse(url)) return "public";
  const params = new URL(url).searchParams;
  const searchPath = /-c\s*search_path=([^\s,]+)/.exec(params.get("options") ?? "")?.[1];
  return params.get("schema") ?? searchPath?.replace(/^"(.*)"$/, "$1") ?? "public";
}

export function createDb(url: string = databaseUrl(), max = 10): Db {
  const pool = new pg.Pool({ ...withSessionOptions(url, SESSION_OPTIONS), max, allowExitOnIdle: true });
  pool.on("error", () => {
    /* an idle client lost its connection; the pool replaces it */
  });
  // a client checked out when Postgres goes away (a restart, an outage) emits "error" with no
  // pool listener left on it: its query fails, the process must not (the pool drops it on release)
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema: prismaSchemaOf(url) }) });
  return {
    pool,
    prisma,
    async close() {
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}

let shared: Db | undefined;

/** The process's Db, created on first use. */
export function getDb(): Db {
  shared ??= createDb();
  return shared;
}

/** Where a Db's connections go (to tell its outage from another service's by the port). */
export const databaseUrlOf = (db: Db): string => db.pool.options.connectionString ?? "";

/** What a read runs on: the Db's pool, or the transaction's client it was given. */
export const queryableOf = (on: Db | Queryable): Queryable => ("pool" in on ? on.pool : on);
