import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepOrphans, type SweepDeps } from "../../lib/runner/reconcile";
import { redisNames } from "../../lib/runner/redis-names";
import { registerWorker } from "../../lib/store/runs/worker-registry";
import { beginAttempt } from "../support/attempts";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { attemptsOf, issueEvent, openRun, REDIS_URL, uniquePrefix } from "./support/runner-fixture";

/**
 * The orphan sweep never waits: an Attempt whose lease is gone while its worker looks alive is
 * closed by the first sweep that finds it still unheld a confirmation window after a sweep first
 * found it so. The window is timed by the sighting's key in Redis, so this file ages a sighting
 * by shortening that key's life instead of waiting it out. A database of its own: the sweep acts
 * on every Running Attempt it finds.
 */

const TTL = 30_000;
const CONFIRM = 60_000;
let pdb: PrivateDb;
let redis: Redis;
const prefix = `${uniquePrefix("sweep")}:`;
const names = redisNames(prefix);
const moved: string[] = [];

beforeAll(async () => {
  pdb = await createPrivateDb("sweep");
  redis = new Redis(REDIS_URL);
  await registerWorker(pdb.db, { id: "alive", host: "elsewhere", pid: 1, version: "test", slots: 1 });
});
afterAll(async () => {
  redis?.disconnect();
  await pdb?.drop();
});

const deps = (): SweepDeps => ({
  db: pdb.db,
  redis,
  keyPrefix: prefix,
  leaseTtlMs: TTL,
  confirmMs: CONFIRM,
  recheckCondition: async () => true,
  workQueue: { moveRun: async (runId) => void moved.push(runId) },
});

/** A Run whose Attempt, held by the live worker "alive" by `token`, started a minute ago (older than a TTL). */
async function runningAttempt(number: number, token: string) {
  const run = await openRun(pdb.db, issueEvent("acme/sweep", number, "h1", "Sweep me"));
  const begun = await beginAttempt(pdb.db, run.runId, { token, workerId: "alive" });
  if (begun.tag !== "Started") throw new Error(`expected a start, got ${begun.tag}`);
  await pdb.db.pool.query(`UPDATE attempts SET started_at = now() - interval '1 minute' WHERE id = $1`, [begun.attempt.id]);
  return { runId: run.runId, attemptId: begun.attempt.id };
}

/** Makes the first sighting of `attemptId` a whole confirmation window old, by Redis's clock. */
const ageSighting = (attemptId: string) => redis.pexpire(names.orphanSuspect(attemptId), 2 * CONFIRM - CONFIRM);

const states = async (runId: string) => (await attemptsOf(pdb.db, runId)).map((a) => a.state);

describe("the orphan sweep", () => {
  it("returns at once on an unheld Attempt of a live worker, and a later sweep closes it once it was unheld for the confirmation window", async () => {
    const { runId, attemptId } = await runningAttempt(1, "alive/one");
    expect(await sweepOrphans(deps())).toEqual([]);
    expect(await sweepOrphans(deps())).toEqual([]);
    expect(await states(runId)).toEqual(["Running"]);

    await ageSighting(attemptId);
    expect(await sweepOrphans(deps())).toEqual([attemptId]);
    expect((await attemptsOf(pdb.db, runId))[0]).toMatchObject({ state: "Failed", failure_kind: "InfraFailure", failure_category: "lease_lost" });
    expect(moved).toContain(runId);
    expect(await redis.exists(names.orphanSuspect(attemptId))).toBe(0);
  });

  it("forgets a sighting once the lease is held again: a later loss is timed from its own first sighting", async () => {
    const { runId, attemptId } = await runningAttempt(2, "alive/two");
    const lease = names.lease(runId);
    expect(await sweepOrphans(deps())).toEqual([]);
    await ageSighting(attemptId);
    // the live holder sets its lost key again (Redis lost it: FLUSHALL), and a sweep sees it held
    await redis.set(lease, "alive/two", "PX", TTL);
    expect(await sweepOrphans(deps())).toEqual([]);
    expect(await redis.exists(names.orphanSuspect(attemptId))).toBe(0);
    // lost again: a first sighting, not one a window old
    await redis.del(lease);
    expect(await sweepOrphans(deps())).toEqual([]);
    expect(await states(runId)).toEqual(["Running"]);
    expect(await redis.pttl(names.orphanSuspect(attemptId))).toBeGreaterThan(CONFIRM);
  });
});
