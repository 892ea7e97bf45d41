import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMaintenanceWorker, ORPHAN_SWEEP_SCHEDULER, RUN_RECONCILE_SCHEDULER, type MaintenanceWorker, MAINTENANCE_QUEUE } from "../../jobs/processors/maintenance";
import { createMirrorWorker, MIRROR_SWEEP_SCHEDULER, type MirrorWorker } from "../../jobs/processors/mirror";
import { bullConnection, POLL_TICK_SCHEDULER_ID, QUEUE_NAMES, RECONCILE_SCHEDULER_ID, runJobId, scheduleSchedulerId } from "../../jobs/queues";
import { rebuildFromPostgres } from "../../jobs/rebuild-redis";
import { startRebuildGuard } from "../../lib/runner/rebuild-guard";
import { pollRepository } from "../../lib/triggers/poll-repository";
import { installRepository, startFixture, type Fixture } from "../github/support/fixture";
import { issueEvent, openRun } from "../runner/support/runner-fixture";

/**
 * Invariant 1, scheduler by scheduler: once this instance's Redis data is gone (its keys
 * deleted — the shared Redis must not be flushed under the other files), the rebuild guard's
 * rebuild brings back the poll scheduler of the repository, the schedule Loop's, the
 * installations' reconcile, both maintenance schedulers and the mirror's sweep, the open Run's
 * job and its mirror's sync; and a
 * repository whose poll interval had backed off is due at once (its webhooks may have been lost).
 */

let fx: Fixture;
let redis: Redis;
let maintenance: MaintenanceWorker;
let mirror: MirrorWorker;
beforeAll(async () => {
  fx = await startFixture();
  redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await maintenance?.close(true);
  await maintenance?.queue.obliterate({ force: true }).catch(() => undefined);
  await mirror?.queue.obliterate({ force: true }).catch(() => undefined);
  await mirror?.close();
  redis?.disconnect();
  await fx?.close();
});

/** Every key of this file's prefix, gone: what a FLUSHALL does to this instance. */
async function loseRedisData(prefix: string): Promise<number> {
  let removed = 0;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
    cursor = next;
    if (keys.length) removed += await redis.del(...keys);
  } while (cursor !== "0");
  return removed;
}

const CONFIG = `loops:
  nightly:
    on: { schedule: { cron: "15 7 * * 1-5", tz: Europe/Paris } }
    agent: demo
    prompt: Triage \${{ repository.full_name }}
`;

describe("the rebuild after Redis lost its data", () => {
  it("brings back every scheduler and the open Runs' jobs, then finds nothing missing", async () => {
    const { fullName } = await installRepository(fx, { owner: "rebuild", name: "app", config: CONFIG });
    await pollRepository(fx.deps, fullName);
    const deps = { db: fx.db, redis, workQueue: fx.workQueue, recheckCondition: async () => true, keyPrefix: `${fx.prefix}:`, leaseTtlMs: 30_000 };
    maintenance = await createMaintenanceWorker(bullConnection(), deps, { prefix: fx.prefix });
    await maintenance.worker.close(); // only its queue and schedulers matter here
    mirror = await createMirrorWorker(bullConnection(), { db: fx.db, github: async (id) => fx.github.installationOctokit(id), publicUrl: "http://atelier.test" }, { prefix: fx.prefix, listen: false });
    await mirror.worker.close(); // likewise
    await fx.workQueue.syncSchedulers();
    // an open Run whose job Redis will lose
    const run = await openRun(fx.db, issueEvent(fullName, 1, "h1", "Rebuild me"));
    await fx.workQueue.moveRun(run.runId, { receivedAt: run.receivedAt });
    // a quiet repository, backed off to the longest interval
    await fx.db.pool.query(`UPDATE repositories SET poll_interval_s = 240, next_poll_at = now() + interval '240 seconds' WHERE full_name = $1`, [fullName]);
    const dueAt = async () => (await fx.db.pool.query<{ due: boolean; interval: number }>(`SELECT next_poll_at <= now() AS due, poll_interval_s AS interval FROM repositories WHERE full_name = $1`, [fullName])).rows[0];

    let rebuilds = 0;
    const guard = await startRebuildGuard(redis, `${fx.prefix}:rebuilt`, async () => {
      rebuilds++;
      await rebuildFromPostgres({ workQueue: fx.workQueue, maintenance, mirror, deps });
    }, { everyMs: 600_000 });
    try {
      expect(await guard.check()).toBe(false);
      expect(await dueAt()).toEqual({ due: false, interval: 240 });
      expect(await loseRedisData(fx.prefix)).toBeGreaterThan(0);
      expect(await fx.workQueue.queue(QUEUE_NAMES.poll).getJobScheduler(POLL_TICK_SCHEDULER_ID)).toBeFalsy();

      expect(await guard.check()).toBe(true);
      expect(rebuilds).toBe(1);
      // due at the next tick, its interval kept
      expect(await dueAt()).toEqual({ due: true, interval: 240 });
      expect(await fx.workQueue.queue(QUEUE_NAMES.poll).getJobScheduler(POLL_TICK_SCHEDULER_ID)).toMatchObject({ every: 15_000 });
      expect(await fx.workQueue.queue(QUEUE_NAMES.schedules).getJobScheduler(scheduleSchedulerId(fullName, "nightly"))).toMatchObject({
        pattern: "15 7 * * 1-5",
        tz: "Europe/Paris",
      });
      expect(await fx.workQueue.queue(QUEUE_NAMES.installations).getJobScheduler(RECONCILE_SCHEDULER_ID)).toBeTruthy();
      const maint = maintenance.queue;
      expect(maint.name).toBe(MAINTENANCE_QUEUE);
      expect(await maint.getJobScheduler(RUN_RECONCILE_SCHEDULER)).toBeTruthy();
      expect(await maint.getJobScheduler(ORPHAN_SWEEP_SCHEDULER)).toMatchObject({ every: 10_000 });
      expect(await fx.workQueue.queue(QUEUE_NAMES.attempts).getJob(runJobId(run.runId))).toBeTruthy();
      // the mirror's sweep, and the sync of the open Run, whose check run was never written
      expect(await mirror.queue.getJobScheduler(MIRROR_SWEEP_SCHEDULER)).toMatchObject({ every: 60_000 });
      expect((await mirror.queue.getWaiting()).map((j) => j.data.runId)).toContain(run.runId);

      // nothing missing: the next look rebuilds nothing
      expect(await guard.check()).toBe(false);
      expect(rebuilds).toBe(1);
    } finally {
      guard.stop();
    }
  });
});
