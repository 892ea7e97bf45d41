import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisOptions } from "../../lib/config/redis";
import { acquireLease, leaseHolder } from "../../lib/runner/lease";
import { REDIS_URL, uniquePrefix, waitFor } from "./support/runner-fixture";

const redis = new Redis(redisOptions(REDIS_URL));
afterAll(() => redis.quit());
const prefix = uniquePrefix("lease");
let n = 0;
const key = () => `${prefix}:lease:run:${n++}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the Run lease", () => {
  it("has one holder at a time, renewed by its heartbeat past the TTL, released only by its holder", async () => {
    const k = key();
    const a = await acquireLease(redis, k, { ttlMs: 300 });
    expect(a).not.toBeNull();
    expect(await acquireLease(redis, k, { ttlMs: 300 })).toBeNull();
    await sleep(700); // more than two TTLs: only the heartbeat keeps it
    expect(await leaseHolder(redis, k)).toBe(a!.token);
    expect(a!.lost.aborted).toBe(false);
    await a!.release();
    expect(await leaseHolder(redis, k)).toBeNull();
    const b = await acquireLease(redis, k, { ttlMs: 300 });
    await a!.release(); // a late release of the old holder deletes nothing
    expect(await leaseHolder(redis, k)).toBe(b!.token);
    await b!.release();
  });

  it("is lost when another token holds the key: the holder stops renewing and never deletes it", async () => {
    const k = key();
    const reasons: string[] = [];
    const a = (await acquireLease(redis, k, { ttlMs: 300, onLost: (r) => reasons.push(r) }))!;
    await redis.set(k, "someone-else", "PX", 5_000);
    await waitFor("the loss", async () => a.lost.aborted, 2_000, 10);
    expect(a.lost.reason).toBe("taken");
    expect(reasons).toEqual(["taken"]);
    await a.release();
    expect(await leaseHolder(redis, k)).toBe("someone-else");
  });

  it("is set again by its live holder when Redis lost the key (FLUSHALL), within a third of the TTL", async () => {
    const k = key();
    const a = (await acquireLease(redis, k, { ttlMs: 600 }))!;
    await redis.del(k);
    await waitFor("the key back", async () => (await leaseHolder(redis, k)) === a.token, 1_000, 10);
    expect(a.lost.aborted).toBe(false);
    await a.release();
  });

  it("is lost when Redis does not answer for a whole TTL", async () => {
    const cut = new Redis({ ...redisOptions(REDIS_URL), lazyConnect: true });
    await cut.connect();
    const k = key();
    const a = (await acquireLease(cut, k, { ttlMs: 400 }))!;
    const t0 = Date.now();
    cut.disconnect(); // commands now queue while it (does not) reconnect
    await waitFor("the loss", async () => a.lost.aborted, 2_000, 10);
    expect(a.lost.reason).toBe("expired");
    expect(Date.now() - t0).toBeLessThan(450);
    a.abandon();
  });

  it("keeps renewing and releases by digest after Redis forgot its scripts (SCRIPT FLUSH): the text is sent again", async () => {
    const k = key();
    const a = (await acquireLease(redis, k, { ttlMs: 300 }))!;
    // server-wide, but harmless to the other files: ioredis (BullMQ's scripts) sends them again too
    await redis.script("FLUSH");
    await sleep(700); // more than two TTLs: each renewal had to send its script again
    expect(a.lost.aborted).toBe(false);
    expect(await leaseHolder(redis, k)).toBe(a.token);
    await redis.script("FLUSH");
    await a.release();
    expect(await leaseHolder(redis, k)).toBeNull();
  });

  it("abandoned, stops its heartbeat and leaves the key to expire by itself, lost to nobody", async () => {
    const k = key();
    const a = (await acquireLease(redis, k, { ttlMs: 300 }))!;
    a.abandon();
    expect(await leaseHolder(redis, k)).toBe(a.token);
    await waitFor("the key to expire", async () => (await leaseHolder(redis, k)) === null, 2_000, 10);
    expect(a.lost.aborted).toBe(false);
  });
});
