import { afterAll, describe, expect, it } from "vitest";
import { DatabaseAwayError, holdThroughOutage } from "../../lib/runner/hold-through-outage";
import { testDb } from "../support/db";

/** The hold of an outcome write: through a database outage only, until its deadline, never past a lost lease. */

const db = testDb(1);
afterAll(() => db.close());

/** What pg throws when Postgres shuts down under a query. */
const shutdown = () => Object.assign(new Error("terminating connection due to administrator command"), { severity: "FATAL", code: "57P01" });
const never = new AbortController().signal;

describe("holdThroughOutage", () => {
  it("tries again while the database is away, and returns what the write returns once it answers", async () => {
    let tries = 0;
    const waits: number[] = [];
    const value = await holdThroughOutage(
      db,
      async () => {
        if (++tries < 3) throw shutdown();
        return "written";
      },
      { until: Date.now() + 60_000, signal: never, onHeld: (_err, ms) => waits.push(ms) },
    );
    expect(value).toBe("written");
    expect(waits).toEqual([500, 1_000]);
  });

  it("throws any other error at once", async () => {
    let tries = 0;
    const write = async () => {
      tries++;
      throw new Error("a bug");
    };
    await expect(holdThroughOutage(db, write, { until: Date.now() + 60_000, signal: never })).rejects.toThrow("a bug");
    expect(tries).toBe(1);
  });

  it("gives up at its deadline with a reason that names the database", async () => {
    const err = await holdThroughOutage(db, async () => Promise.reject(shutdown()), { until: Date.now() + 1_000, signal: never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseAwayError);
    expect((err as Error).message).toMatch(/^the database \(Postgres\) did not answer for \d+ s$/);
  });

  it("stops holding once the lease is lost", async () => {
    const lost = new AbortController();
    let tries = 0;
    const held = holdThroughOutage(
      db,
      async () => {
        tries++;
        throw shutdown();
      },
      { until: Date.now() + 600_000, signal: lost.signal, onHeld: () => lost.abort() },
    );
    await expect(held).rejects.toBeInstanceOf(DatabaseAwayError);
    expect(tries).toBe(2);
  });
});
