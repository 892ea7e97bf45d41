import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerLog } from "../../lib/runner/runner-deps";
import { startOutageRig, type OutageRig } from "./support/outage-rig";
import { attemptsOf, issueEvent, openRun, settledState, waitFor } from "./support/runner-fixture";

/**
 * A Run's job that meets a Postgres outage before its Attempt begins (Postgres restarted or
 * away: the chaos run's postgres-restart and postgres-down-20s) is moved again once Postgres
 * is back, by the same worker, without waiting for a reconcile: the job does not just fail.
 */

let rig: OutageRig;
const met: string[] = [];
const log: RunnerLog = {
  info: () => undefined,
  warn: (_obj: object, msg?: string) => void (msg && met.push(msg)),
  error: (_obj: object, msg?: string) => void (msg && met.push(msg)),
};

beforeAll(async () => {
  rig = await startOutageRig("move-outage", 4, { log });
  rig.runner.worker.on("failed", (_job, err) => met.push(`job failed: ${err.message}`));
}, 120_000);
afterAll(() => rig?.close());

describe("a Run's job that meets a Postgres outage", () => {
  it("is moved again once Postgres is back: the Run succeeds without a reconcile", async () => {
    const repo = await rig.world.addRepo("move-outage");
    const run = await openRun(rig.db, issueEvent(repo, 71, "h1", "Start after the outage"));
    rig.cluster.stop();
    try {
      // no `opened`: the job reads the Run, and meets the outage
      await rig.runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
      await waitFor("the job to meet the outage", async () => met.length > 0 || null, 60_000, 100);
    } finally {
      rig.cluster.start();
    }
    expect(await settledState(rig.db, run.runId, 90_000)).toBe("Succeeded");
    expect((await attemptsOf(rig.db, run.runId)).map((a) => a.state)).toEqual(["Succeeded"]);
    expect(met.filter((m) => m.startsWith("job failed"))).toEqual([]);
    const { rows } = await rig.db.pool.query<{ engine_failures: number }>(`SELECT engine_failures FROM runs WHERE id = $1`, [run.runId]);
    expect(rows[0]!.engine_failures).toBe(0);
  }, 240_000);
});
