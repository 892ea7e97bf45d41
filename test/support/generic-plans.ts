import type pg from "pg";
import { createDb, type Db } from "../../lib/store/db";
import { createPrivateDb, type PrivateDb } from "./private-db";

/**
 * A database of its own, migrated and analyzed while empty, and a Db on it whose every
 * execution uses the generic plan, made at a statement's first execution: on empty tables, as
 * on a fresh instance where autovacuum is off (ADR 0030).
 */
export async function emptyGenericDb(name: string): Promise<{ priv: PrivateDb; generic: Db; drop(): Promise<void> }> {
  const priv = await createPrivateDb(name);
  const url = new URL(priv.url);
  url.searchParams.set("options", "-c plan_cache_mode=force_generic_plan");
  const generic = createDb(url.toString(), 1);
  await priv.db.pool.query("ANALYZE");
  return {
    priv,
    generic,
    async drop() {
      await generic.close();
      await priv.drop();
    },
  };
}

/**
 * The scans of the prepared statement `name`'s cached plan on `client`, run on the one json
 * parameter `input`, that read the whole of one of `tables` or of one of its indexes (a
 * sequential scan, or an index scan with no index condition).
 */
export async function wholeScans(client: pg.PoolClient, name: string, input: unknown, tables: readonly string[]): Promise<string[]> {
  const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE "${name}"(${client.escapeLiteral(JSON.stringify(input))})`);
  const lines = rows.map((r) => r["QUERY PLAN"]);
  const of = `(${tables.join("|")})\\b`;
  return lines.filter(
    (line, i) =>
      new RegExp(`Seq Scan on ${of}`).test(line) ||
      (new RegExp(`Index (Only )?Scan using \\S+ on ${of}`).test(line) && !/Index Cond/.test(lines[i + 1] ?? "")),
  );
}
