import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisOptions } from "../../lib/config/redis";
import { acquireLease, leaseHolder } from "../../lib/runner/lease";
import { startPrivateRedis } from "../support/private-redis";
import { REDIS_URL, uniquePrefix, waitFor } from "./support/runner-fixture";

const redis = new Redis(redisOptions(REDIS_URL));
afterAll(() => redis.quit());
const prefix = uniquePrefix("lease");
let n = 0;
const key = () => `${prefix}:lease:run:${n++}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// TTLs of seconds, not hundreds of ms: the CI machine may be busy, and a heartbeat a few hundred
// ms late must not read as a lost lease (two of these tests failed so on a fresh clone)
const TTL = 2_000;

describe("the Run lease", () => {
  it("has one holder at a time, renewed by its heartbeat past the TTL, released only by its holder", async () => {
    const k = key();
    const a = await acquireLease(redis, k, { ttlMs: TTL });
    expect(a).not.toBeNull();
    expect(await acquireLease(redis, k, { ttlMs: TTL })).toBeNull();
    await sleep(2 * TTL + 500); // more than two TTLs: only the heartbeat keeps it
    expect(await leaseHolder(redis, k)).toBe(a!.token);
    expect(a!.lost.aborted).toBe(false);
    await a!.release();
    expect(await leaseHolder(redis, k)).toBeNull();
    const b = await acquireLease(redis, k, { ttlMs: TTL });
    await a!.release(); // a late release of the old holder deletes nothing
    expect(await leaseHolder(redis, k)).toBe(b!.token);
    await b!.release();
  });

  it("is lost when another token holds the key: the holder stops renewing and never deletes it", async () => {
    const k = key();
    const reasons: string[] = [];
    const a = (await acquireLease(redis, k, { ttlMs: TTL, onLost: (r) => reasons.push(r) }))!;
    await redis.set(k, "someone-else", "PX", 5_000);
    await waitFor("the loss", async () => a.lost.aborted, 3 * TTL, 10);
    expect(a.lost.reason).toBe("taken");
    expect(reasons).toEqual(["taken"]);
    await a.release();
    expect(await leaseHolder(redis, k)).toBe("someone-else");
  });

  it("is set again by its live holder when Redis lost the key (FLUSHALL), before the key would have expired", async () => {
    const k = key();
    const a = (await acquireLease(redis, k, { ttlMs: TTL }))!;
    await redis.del(k);
    // back before the key would have expired by itself
    await waitFor("the key back", async () => (await leaseHolder(redis, k)) === a.token, TTL, 10);
    expect(a.lost.aborted).toBe(false);
    await a.release();
  });

  it("is lost when Redis does not answer for a whole TTL", async () => {
    const cut = new Redis({ ...redisOptions(REDIS_URL), lazyConnect: true });
    await cut.connect();
    const k = key();
    const a = (await acquireLease(cut, k, { ttlMs: TTL }))!;
    const t0 = Date.now();
    cut.disconnect(); // commands now queue while it (does not) reconnect
    await waitFor("the loss", async () => a.lost.aborted, 3 * TTL, 10);
    expect(a.lost.reason).toBe("expired");
    // lost once the TTL passed with no answer; a busy machine may notice some time after
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TTL / 3);
    expect(Date.now() - t0).toBeLessThan(3 * TTL);
    a.abandon();
  });

  it("taken by a SET that Redis answered late, is renewed at once and kept", async () => {
    const paused = await startPrivateRedis();
    const admin = new Redis(paused.url, { maxRetriesPerRequest: null });
    const holder = new Redis(paused.url, { maxRetriesPerRequest: null });
    try {
      const ttl = 6_000;
      const k = key();
      await holder.ping();
      // the SET waits three quarters of the TTL for its answer: a renewal a period after it would come too late
      await admin.call("CLIENT", "PAUSE", String((3 * ttl) / 4), "ALL");
      const a = (await acquireLease(holder, k, { ttlMs: ttl }))!;
      expect(a).not.toBeNull();
      await sleep(ttl);
      expect(a.lost.aborted).toBe(false);
      expect(await leaseHolder(holder, k)).toBe(a.token);
      await a.release();
    } finally {
      admin.disconnect();
      holder.disconnect();
      await paused.stop();
    }
  }, 60_000);

  it("keeps renewing and releases by digest after Redis forgot its scripts (SCRIPT FLUSH): the text is sent again", async () => {
    const k = key();
    const a = (await acquireLease(redis, k, { ttlMs: TTL }))!;
    // server-wide, but harmless to the other files: ioredis (BullMQ's scripts) sends them again too
    await redis.script("FLUSH");
    await sleep(2 * TTL + 500); // more than two TTLs: each renewal had to send its script again
    expect(a.lost.aborted).toBe(false);
    expect(await leaseHolder(redis, k)).toBe(a.token);
    await redis.script("FLUSH");
    await a.release();
    expect(await leaseHolder(redis, k)).toBeNull();
  });

  it("abandoned, stops its heartbeat and leaves the key to expire by itself, lost to nobody", async () => {
    const k = key();
    const a = (await acquireLease(redis, k, { ttlMs: TTL }))!;
    a.abandon();
    expect(await leaseHolder(redis, k)).toBe(a.token);
    await waitFor("the key to expire", async () => (await leaseHolder(redis, k)) === null, 3 * TTL, 10);
    expect(a.lost.aborted).toBe(false);
  });
});
