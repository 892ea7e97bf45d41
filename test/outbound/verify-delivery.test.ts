import { afterAll, describe, expect, it } from "vitest";
import { admission } from "../../lib/metering/admission";
import { createHook } from "../../lib/outbound/hooks";
import type { RunEventPayload } from "../../lib/store/runs/run-event-payload";
import { finishAttempt } from "../../lib/store/runs/attempts";
import { openRun, seedTenant, startAttempt, usage } from "../metering/support";
import { testDb } from "../support/db";

/** run.succeeded says how the agent's work was checked, read from the Attempt in the outcome's own transaction. */

const db = testDb();
afterAll(() => db.close());

const payloadOf = async (runId: string): Promise<RunEventPayload> =>
  (await db.pool.query<{ payload: RunEventPayload }>(`SELECT payload FROM outbound_deliveries WHERE run_id = $1`, [runId])).rows[0]!.payload;

describe("run.succeeded and verify", () => {
  it("says verify failed, passed, or was not declared", async () => {
    const t = await seedTenant(db, "verifyhook");
    await createHook(db, { installation_id: t.installationId, url: "http://127.0.0.1:9/hook" }, { allowPrivate: true });
    const gate = admission();
    const verify = { passed: false, exitCode: 1, timedOut: false, durationMs: 3_200, tail: "FAILED", command: "npm test", rounds: 1 };
    const finish = async (number: number, v: typeof verify | null) => {
      const runId = await openRun(db, t.repo, number, gate);
      const a = await startAttempt(db, runId);
      await finishAttempt(db, a, { tag: "Succeeded", summary: "done", usage: usage(0.1, 1_000, true), branch: null, pullRequestNumber: null, headSha: null, verify: v });
      return payloadOf(runId);
    };
    const failed = await finish(1, verify);
    expect(failed.event).toBe("run.succeeded");
    expect(failed.run.verify).toEqual({ result: "failed", command: "npm test", exit_code: 1, timed_out: false, duration_ms: 3_200, rounds: 1 });
    expect((await finish(2, { ...verify, passed: true, exitCode: 0, rounds: 2 })).run.verify).toMatchObject({ result: "passed", rounds: 2 });
    expect((await finish(3, null)).run.verify).toMatchObject({ result: "not_declared", command: null });
  });
});
