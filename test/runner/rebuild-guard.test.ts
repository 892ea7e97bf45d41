import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisOptions } from "../../lib/config/redis";
import { startRebuildGuard } from "../../lib/runner/rebuild-guard";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis";
import { waitFor } from "./support/runner-fixture";

/** Invariant 1 after a FLUSHALL: a worker notices its marker gone and rebuilds from Postgres. */

let server: PrivateRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startPrivateRedis();
  redis = new Redis(redisOptions(server.url));
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

describe("the rebuild guard", () => {
  it("does nothing while Redis keeps its data, and rebuilds once after a FLUSHALL, then marks it again", async () => {
    let rebuilds = 0;
    const guard = await startRebuildGuard(redis, "t:rebuilt", async () => void rebuilds++, { everyMs: 200 });
    try {
      expect(await guard.check()).toBe(false);
      expect(await guard.check()).toBe(false);
      expect(rebuilds).toBe(0);
      expect(await redis.flushall()).toBe("OK");
      await waitFor("the rebuild", async () => rebuilds === 1 || null, 10_000);
      expect(await redis.exists("t:rebuilt")).toBe(1);
      expect(await guard.check()).toBe(false);
      expect(rebuilds).toBe(1);
    } finally {
      guard.stop();
    }
  });

  it("keeps the marker missing while a rebuild fails, so the next look tries again", async () => {
    let tries = 0;
    const guard = await startRebuildGuard(redis, "t:rebuilt-2", async () => {
      tries++;
      if (tries === 1) throw new Error("Postgres is away");
    }, { everyMs: 60_000 });
    try {
      await redis.del("t:rebuilt-2");
      await expect(guard.check()).rejects.toThrow("Postgres is away");
      expect(await redis.exists("t:rebuilt-2")).toBe(0);
      expect(await guard.check()).toBe(true);
      expect(tries).toBe(2);
    } finally {
      guard.stop();
    }
  });
});
