import { afterAll, describe, expect, it } from "vitest";
import { compile, first, join, literal, raw, sql } from "../../lib/store/kernel/sql";
import { testDb } from "../support/db";

const db = testDb(1);
afterAll(() => db.close());

describe("the store's sql template", () => {
  it("numbers each value where it is written, inlines nested statements and raw text, and never pastes a value", () => {
    const states = raw("'Pending','Queued'");
    const inner = sql`repo = ${"o/r"} AND loop = ${"fix"}`;
    const statement = sql`SELECT id FROM runs WHERE id = ${"r1"} AND state IN (${states}) AND ${inner} AND n > ${3}`;
    expect(compile(statement)).toEqual({
      text: "SELECT id FROM runs WHERE id = $1 AND state IN ('Pending','Queued') AND repo = $2 AND loop = $3 AND n > $4",
      values: ["r1", "o/r", "fix", 3],
    });
    expect(compile(sql`WHERE ${join([sql`a = ${1}`, sql`b = ${2}`, sql`c = ${3}`], " AND ")}`)).toEqual({ text: "WHERE a = $1 AND b = $2 AND c = $3", values: [1, 2, 3] });
    expect(compile(sql`SELECT ${"'; DROP TABLE runs; --"}`)).toEqual({ text: "SELECT $1", values: ["'; DROP TABLE runs; --"] });
  });

  it("quotes a literal known when the code is written, its quotes doubled", async () => {
    expect(compile(sql`SET state = ${literal("Running")}`)).toEqual({ text: "SET state = 'Running'", values: [] });
    expect(await first<{ v: string }>(db.pool, sql`SELECT ${literal("it's")}::text AS v`)).toEqual({ v: "it's" });
  });

  it("runs against Postgres with the values bound", async () => {
    const hostile = "x'); DROP TABLE runs; --";
    expect(await first<{ v: string; n: number }>(db.pool, sql`SELECT ${hostile}::text AS v, ${2}::int + ${3}::int AS n`)).toEqual({ v: hostile, n: 5 });
  });
});
