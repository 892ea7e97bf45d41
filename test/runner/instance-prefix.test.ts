import { randomBytes } from "node:crypto";
import { Worker } from "bullmq";
import { afterAll, afterEach, expect, it } from "vitest";
import { createRedis, instanceKeyPrefix, instanceRedisPrefix } from "../../lib/config/redis";
import { BullWorkQueue, bullConnection, bullPrefix, QUEUE_NAMES } from "../../jobs/queues";
import { testDb } from "../support/db";

const db = testDb();
const redis = createRedis();
const saved = process.env.ATELIER_REDIS_PREFIX;
afterEach(() => {
  if (saved === undefined) delete process.env.ATELIER_REDIS_PREFIX;
  else process.env.ATELIER_REDIS_PREFIX = saved;
});
afterAll(async () => {
  await redis.quit();
  await db.close();
});

it("reads the instance's Redis prefix from ATELIER_REDIS_PREFIX and refuses one Redis cannot hold safely", () => {
  expect(instanceRedisPrefix({})).toBe("atelier");
  expect(instanceKeyPrefix({ ATELIER_REDIS_PREFIX: "team-b" })).toBe("team-b:");
  expect(() => instanceRedisPrefix({ ATELIER_REDIS_PREFIX: "a b" })).toThrow(expect.objectContaining({ token: "redis_prefix_invalid" }));
});

it("two instances sharing one Redis keep apart: each worker takes only its own instance's jobs", async () => {
  const tag = randomBytes(3).toString("hex");
  const [a, b] = [`inst-a-${tag}`, `inst-b-${tag}`];
  const connection = bullConnection();
  const started = (prefix: string, seen: string[]) => {
    process.env.ATELIER_REDIS_PREFIX = prefix;
    const worker = new Worker(QUEUE_NAMES.hints, async (job) => void seen.push(`${prefix}:${job.id}`), { connection, ...bullPrefix() });
    return worker;
  };
  const seenA: string[] = [];
  const seenB: string[] = [];
  const workerB = started(b, seenB);
  process.env.ATELIER_REDIS_PREFIX = a;
  const queueA = new BullWorkQueue({ connection, db, pollIntervalSeconds: 60 }); // no prefix given: the instance's
  try {
    await queueA.hint({ installationId: 1, repo: "prefix/test", number: 7 });
    expect(await redis.keys(`${a}:${QUEUE_NAMES.hints}:*`)).not.toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(seenB).toEqual([]); // instance B's worker never saw A's job
    const workerA = started(a, seenA);
    try {
      await expect.poll(() => seenA.length, { timeout: 5_000 }).toBe(1);
    } finally {
      await workerA.close();
    }
    expect(seenB).toEqual([]);
  } finally {
    await workerB.close();
    await queueA.queue(QUEUE_NAMES.hints).obliterate({ force: true });
    await queueA.close();
  }
});
