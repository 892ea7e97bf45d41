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

  it("costs one Redis round trip, an EXISTS, when nothing is missing", async () => {
    const guard = await startRebuildGuard(redis, "t:rebuilt-3", async () => undefined, { everyMs: 600_000 });
    const monitor = await redis.monitor();
    const seen: string[][] = [];
    monitor.on("monitor", (_time: string, args: string[]) => seen.push(args));
    try {
      expect(await guard.check()).toBe(false);
      await waitFor("the command to show", async () => seen.length > 0 || null, 10_000);
      // a moment for anything else the check might have sent
      await redis.ping();
      await waitFor("the ping to show", async () => seen.some((a) => a[0]?.toLowerCase() === "ping") || null, 10_000);
      expect(seen.filter((a) => a[0]?.toLowerCase() !== "ping")).toEqual([["exists", "t:rebuilt-3"]]);
    } finally {
      guard.stop();
      monitor.disconnect();
    }
  });
});
