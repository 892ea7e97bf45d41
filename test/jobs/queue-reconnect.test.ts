import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bullConnection } from "../../jobs/queues";
import { RECONNECT_MAX_DELAY_MS } from "../../lib/config/redis";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis";

/**
 * BullMQ's queues and workers try to reconnect to a Redis that went away at most
 * RECONNECT_MAX_DELAY_MS apart, however long it stays away: with BullMQ's own default the
 * eighth try already waited 3 s (20 s later on), so they came back long after Redis did.
 */

let redis: PrivateRedis;
let queue: Queue | undefined;
beforeAll(async () => {
  redis = await startPrivateRedis();
});
afterAll(async () => {
  await redis.start().catch(() => undefined);
  await queue?.close();
  await redis.stop();
});

describe("a BullMQ connection while Redis is away", () => {
  it("tries again at most the longest reconnection delay apart", async () => {
    queue = new Queue("reconnect", { connection: bullConnection(redis.url) });
    const client = await queue.getBackend().client;
    await queue.count();
    const delays: number[] = [];
    const tries = new Promise<void>((resolve) =>
      client.on("reconnecting", (ms: number) => {
        delays.push(ms);
        if (delays.length === 10) resolve();
      }),
    );
    queue.on("error", () => undefined);
    await redis.stop();
    await tries;
    expect(Math.max(...delays)).toBeLessThanOrEqual(RECONNECT_MAX_DELAY_MS);

    await redis.start();
    expect(await queue.count()).toBe(0);
  });
});
