import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerLog } from "../../lib/runner/runner-deps";
import { startOutageRig, type OutageRig } from "./support/outage-rig";
import { agents, attemptsOf, issueEvent, openRun, settledState, waitFor } from "./support/runner-fixture";

/**
 * Outcomes survive a database outage: Postgres (a cluster of the test's own) is stopped while
 * the agent runs; the agent finishes meanwhile; the worker holds its outcome (and its lease)
 * and writes it once Postgres is back 20 s later. The Run succeeds on its first Attempt: the
 * work is not run again.
 */

const OUTAGE_MS = 20_000;
let rig: OutageRig;
const held: string[] = [];
const log: RunnerLog = {
  info: () => undefined,
  warn: (obj: object, msg?: string) => {
    if (msg?.includes("holding")) held.push(msg);
  },
  error: () => undefined,
};

beforeAll(async () => {
  rig = await startOutageRig("outage", 6, { roster: agents({ patient: { maxAttemptMinutes: 5 } }), log });
}, 120_000);
afterAll(() => rig?.close());

describe("an Attempt that finishes while Postgres is away", () => {
  it("holds its outcome and writes it once Postgres is back 20 s later: Succeeded, not run again", async () => {
    const repo = await rig.world.addRepo("outage");
    const run = await openRun(rig.db, issueEvent(repo, 51, "h1", "Finish during the outage [demo:sleep 4]", { agent: "patient" }));
    await rig.runner.queue.moveRun(run.runId, { receivedAt: run.receivedAt });
    await waitFor("the Attempt to run", async () => (await attemptsOf(rig.db, run.runId)).find((a) => a.state === "Running"), 60_000);
    // the agent itself is at work (its 4 s sleep ahead) before Postgres goes away
    await waitFor("the agent to start writing", async () => {
      const { rows } = await rig.db.pool.query(`SELECT 1 FROM transcript_entries WHERE run_id = $1 AND text LIKE 'demo agent: writing%'`, [run.runId]);
      return rows.length > 0 || null;
    }, 60_000, 100);

    rig.cluster.stop();
    try {
      // the agent finishes, and the worker meets the outage when it records what it did
      await waitFor("the worker to hold the outcome", async () => held.length > 0 || null, 60_000, 200);
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
    } finally {
      rig.cluster.start();
    }

    expect(await settledState(rig.db, run.runId, 60_000)).toBe("Succeeded");
    expect((await attemptsOf(rig.db, run.runId)).map((a) => [a.number, a.state])).toEqual([[1, "Succeeded"]]);
    const { rows } = await rig.db.pool.query<{ pull_request_number: number | null }>(`SELECT pull_request_number FROM runs WHERE id = $1`, [run.runId]);
    expect(rows[0]!.pull_request_number).not.toBeNull();
  }, 240_000);
});
