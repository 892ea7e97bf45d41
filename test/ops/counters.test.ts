import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisOptions } from "../../lib/config/redis";
import { prettyLine } from "../../lib/github/log";
import { metrics, registry } from "../../lib/metrics/metrics";
import { acquireLease } from "../../lib/runner/lease";
import { REDIS_URL, uniquePrefix, waitFor } from "../runner/support/runner-fixture";

// The counters the full flow does not reach (nothing goes wrong in it), moved by the thing
// that happens: a lease taken by someone else; and a log line as a terminal shows it.

const redis = new Redis(redisOptions(REDIS_URL));
afterAll(() => redis.quit());

const lossesOf = async (reason: string) => (await metrics.leaseLosses.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

describe("the lease-loss counter", () => {
  it("counts a lease another token took, once, by its reason", async () => {
    const before = await lossesOf("taken");
    const key = `${uniquePrefix("ops-lease")}:lease:run:1`;
    const lease = (await acquireLease(redis, key, { ttlMs: 2_000 }))!;
    await redis.set(key, "someone-else", "PX", 10_000);
    await waitFor("the loss", async () => lease.lost.aborted, 10_000, 20);
    expect(await lossesOf("taken")).toBe(before + 1);
    expect(await registry.getSingleMetricAsString("atelier_lease_losses_total")).toMatch(/^atelier_lease_losses_total\{reason="taken"\} \d+$/m);
    await redis.del(key);
  });
});

describe("a terminal's log line", () => {
  it("reads as time, level, name, message and the ids", () => {
    const line = prettyLine(JSON.stringify({ level: 40, time: Date.UTC(2026, 11, 1, 12, 0, 1), pid: 1, hostname: "h", name: "atelier.worker", msg: "attempt ended", run_id: "r1", attempt_id: "r1/agent/1", n: 2 }));
    expect(line).toBe("12:00:01 WARN atelier.worker: attempt ended run_id=r1 attempt_id=r1/agent/1 n=2\n");
    expect(prettyLine("not json")).toBe("not json");
  });
});
