import { afterAll, describe, expect, it } from "vitest";
import { refill } from "../../lib/metering/rate-bucket";
import { refillSql } from "../../lib/store/repo-metering";
import { first, sql } from "../../lib/store/sql";
import { testDb } from "../support/db";

const db = testDb();
afterAll(() => db.close());

// the claim's optimistic statement refills a bucket in SQL, the gate in TypeScript: the same answer
describe("refillSql, the SQL twin of the rate bucket's refill", () => {
  const cases: [tokens: number, elapsed: number, perMinute: number][] = [
    [0, 0, 30],
    [0, 2, 30],
    [0.5, 1, 30],
    [29, 0.4, 30],
    [29, 120, 30],
    [30, 5, 30],
    [-3, 10, 30],
    [1, -5, 30],
    [0, 30, 1],
    [7.25, 0.125, 600],
  ];
  it.each(cases)("tokens %s, %s s later, at %s a minute", async (tokens, elapsed, perMinute) => {
    const row = await first<{ v: number }>(
      db.pool,
      sql`SELECT (${refillSql(sql`${tokens}::float8`, sql`${elapsed}::float8`, sql`${perMinute}::int`)})::float8 AS v`,
    );
    expect(row!.v).toBeCloseTo(refill(tokens, elapsed, perMinute), 9);
  });
});
