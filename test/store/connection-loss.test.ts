import { afterAll, expect, it } from "vitest";
import { testDb } from "../support/db";

const db = testDb(2);
const admin = testDb(1);
afterAll(async () => {
  await db.close();
  await admin.close();
});

it("a connection Postgres ends while it is checked out (a restart, an outage) fails its query, not the process; the pool goes on", async () => {
  const client = await db.pool.connect();
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  // what a Postgres restart does to every connection: the server ends it (57P01 / terminated)
  await admin.pool.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
  // no query in flight: the server's goodbye reaches the client as an "error" event (pg marks it unqueryable)
  await expect.poll(() => (client as unknown as { _queryable: boolean })._queryable, { timeout: 30_000 }).toBe(false);
  await expect(client.query("SELECT 1")).rejects.toThrow();
  client.release();
  await expect(db.pool.query("SELECT 1 AS ok")).resolves.toMatchObject({ rows: [{ ok: 1 }] });
});
