import { afterAll, expect, it } from "vitest";
import { admission } from "../../lib/metering/admission";
import { monthKey } from "../../lib/metering/month";
import { repoScope } from "../../lib/metering/scopes";
import { expireAttempt } from "../../lib/store/runs/attempts";
import { cancelRun } from "../../lib/store/runs/operator-actions";
import { testDb } from "../support/db";
import { openRun, seedTenant, startAttempt } from "./support";

const db = testDb();
afterAll(() => db.close());
const gate = admission();

const minutes = async (repo: string): Promise<number> => {
  const { rows } = await db.pool.query<{ minutes: string }>(`SELECT minutes FROM usage_counters WHERE scope = $1 AND month = $2`, [
    repoScope(repo),
    monthKey(new Date()),
  ]);
  return Number(rows[0]?.minutes ?? 0);
};

/** Makes an open Attempt look as if it began `n` minutes ago. */
const ranFor = (attemptId: string, n: number) =>
  db.pool.query(`UPDATE attempts SET started_at = now() - make_interval(mins => $2) WHERE id = $1`, [attemptId, n]);

it("an Attempt closed by the sweep (lease lost) or by an operator's cancel counts its minutes on the month's counters", async () => {
  const t = await seedTenant(db, "closed");
  const lost = await startAttempt(db, await openRun(db, t.repo, 1, gate));
  await ranFor(lost.id, 2);
  await expireAttempt(db, lost.id);
  expect(await minutes(t.repo)).toBeCloseTo(2, 2);

  const canceled = await openRun(db, t.repo, 2, gate);
  const running = await startAttempt(db, canceled);
  await ranFor(running.id, 3);
  await cancelRun(db, canceled, "octo-admin");
  expect(await minutes(t.repo)).toBeCloseTo(5, 2);
});
