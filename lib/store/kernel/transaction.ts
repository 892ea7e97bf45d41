import type pg from "pg";
import type { Db } from "./db";
import { collectRunChanges, discardRunChanges, flushRunChanges } from "../runs/run-changed";

export type Sql = pg.PoolClient;

/** Postgres error codes (and socket errors) that are worth one more try of the whole transaction. */
const TRANSIENT = new Set(["40001", "40P01", "57P01", "57P03", "08000", "08003", "08006", "53300", "ECONNRESET", "ECONNREFUSED", "EPIPE"]);

export function isTransient(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return typeof code === "string" && TRANSIENT.has(code);
}

export const STORE_TRIES = 4;

/** Retries a store write on transient errors: 4 tries, exponential from 100 ms. */
export async function withStoreRetry<T>(fn: () => Promise<T>, tries = STORE_TRIES, firstDelayMs = 100): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= tries || !isTransient(err)) throw err;
      await new Promise((r) => setTimeout(r, firstDelayMs * 2 ** (attempt - 1)));
    }
  }
}

/**
 * How a transaction begins: plain, or with a transaction-scoped advisory lock taken in the
 * same round trip as BEGIN (that is how writes are serialized per (Loop, Item)).
 */
export type Begin = { lockKey?: bigint };

const beginSql = (begin: Begin): string =>
  begin.lockKey === undefined ? "BEGIN" : `BEGIN; SELECT pg_advisory_xact_lock(${begin.lockKey.toString()})`;

/** Runs `fn` in one transaction, retried as a whole on transient errors. */
export async function transaction<T>(db: Db, fn: (sql: Sql) => Promise<T>, begin: Begin = {}): Promise<T> {
  return withStoreRetry(async () => {
    const client = await db.pool.connect();
    try {
      await client.query(beginSql(begin));
      collectRunChanges(client);
      const result = await fn(client);
      await client.query("COMMIT");
      flushRunChanges(client, db.pool);
      return result;
    } catch (err) {
      discardRunChanges(client);
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  });
}
