import { afterAll, expect, it } from "vitest";
import { testDb } from "../support/db";

const db = testDb(2);
afterAll(() => db.close());

it("every connection of the pool runs without JIT: a short query never pays to be compiled", async () => {
  // two connections at once, so both the first and a later one of the pool are asked
  const [a, b] = await Promise.all([db.pool.connect(), db.pool.connect()]);
  try {
    const answers = await Promise.all([a.query("SHOW jit"), b.query("SHOW jit")]);
    expect(answers.map((r) => r.rows[0].jit)).toEqual(["off", "off"]);
  } finally {
    a.release();
    b.release();
  }
});
