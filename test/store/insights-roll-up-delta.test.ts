import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { countedAfresh, rolledUp } from "../support/insights-roll-up";
import { seedRepo, uniqueInstallationId } from "../dashboard/support/seed";

/**
 * A Run's update that keeps it in its day's row of the Insights roll-up (ADR 0096) writes that row
 * once, and leaves each array of times as it is unless the Run's time in it changed: the row's other
 * Runs' times (1,000 here, enough to be stored out of line) are not written again. The roll-up stays
 * equal to a fresh count of the Runs through every transition. Dated 2021, when no other test file
 * has Runs.
 */

const tag = randomBytes(3).toString("hex");
const REPO = `delta-${tag}/app`;
const OTHERS = 1000;
const RECEIVED = new Date("2021-03-10T09:00:00Z");
const at = (plusS: number) => new Date(RECEIVED.getTime() + plusS * 1000);
let db: Db;

const TIMES = `to_start_ms::text, to_pull_request_ms::text, to_merge_ms::text, merged_pull_requests::text`;

/** The day's row of the start-dev Loop and the demo agent: its counts, and its arrays in their stored order. */
const row = async (day = "2021-03-10") =>
  (
    await db.pool.query(
      `SELECT d.runs, d.in_progress, d.open, d.merged, d.failed, d.no_pull_request, d.succeeded, d.failures, ${TIMES}
         FROM insights_days d JOIN repositories p ON p.id = d.repository_id
        WHERE p.full_name = $1 AND d.day = $2::date AND d.loop = 'start-dev' AND d.agent = 'demo'`,
      [REPO, day],
    )
  ).rows[0] as Record<string, unknown> | undefined;

const matchesTheRuns = async () => expect(await rolledUp(db, [REPO])).toEqual(await countedAfresh(db, [REPO]));

/**
 * `sql` in a transaction of its own, and what it wrote: the row versions of insights_days, and the
 * chunks of values stored out of line in its TOAST table. Postgres counts them per backend until it
 * reports them, which it never does inside a transaction: the difference across `sql` is its own.
 */
async function writes(sql: string, params: unknown[]): Promise<{ rowVersions: number; toastChunks: number }> {
  const client = await db.pool.connect();
  const counted = async () =>
    (
      await client.query<{ row_versions: number; toast_chunks: number }>(
        `SELECT (d.n_tup_ins + d.n_tup_upd)::int AS row_versions, t.n_tup_ins::int AS toast_chunks
           FROM pg_stat_xact_user_tables d, pg_stat_xact_all_tables t
          WHERE d.relid = 'insights_days'::regclass AND t.relid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'insights_days'::regclass)`,
      )
    ).rows[0]!;
  try {
    await client.query("BEGIN");
    const before = await counted();
    await client.query(sql, params);
    const after = await counted();
    await client.query("COMMIT");
    return { rowVersions: after.row_versions - before.row_versions, toastChunks: after.toast_chunks - before.toast_chunks };
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

const insertRun = (id: string, number: number, state: string, startS: number | null) =>
  db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, started_at)
     VALUES ($1, $1, 'start-dev', $2, $3, $4, $5::text::"RunState", 'demo', 'Do it', false, $6, $7)`,
    [id, REPO, JSON.stringify(["github", REPO, number]), number, state, RECEIVED, startS === null ? null : at(startS)],
  );

beforeAll(async () => {
  db = testDb(2);
  await seedRepo(db, REPO, uniqueInstallationId());
  // the day's other Runs: Succeeded, each with a start and an open pull request after times of its own
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, started_at, ended_at,
                       pull_request_number, pull_request_at)
     SELECT $1::text || i, $1::text || i, 'start-dev', $2::text, format('["github","%s",%s]', $2::text, 1000 + i), 1000 + i, 'Succeeded', 'demo', 'Do it', false,
            $3::timestamp, $3::timestamp + (5 + i * 7919 % 3000) * interval '1 second', $3::timestamp + interval '2 hours',
            5000 + i, $3::timestamp + (700 + i * 104729 % 9000) * interval '1 second'
       FROM generate_series(1, ${OTHERS}) i`,
    [`other-${tag}-`, REPO, RECEIVED],
  );
});

afterAll(async () => {
  await db.close();
});

describe("a Run's update within its day's row of the Insights roll-up (ADR 0096)", () => {
  const id = `subject-${tag}`;
  const failing = `failing-${tag}`;

  it("writes the row once per transition, rewrites only the times that changed, and stays equal to a fresh count", async () => {
    await insertRun(id, 1, "Queued", null);
    expect(await row()).toMatchObject({ runs: OTHERS + 1, in_progress: 1 });
    await matchesTheRuns();

    // it starts: its trigger→start joins the others'
    expect(await writes(`UPDATE runs SET state = 'Running', started_at = $2 WHERE id = $1`, [id, at(42)])).toMatchObject({ rowVersions: 1 });
    await matchesTheRuns();

    // its Attempt fails (the Run's sums follow, attempts_roll_up_into_run): no time changes, no array is written again
    await db.pool.query(`INSERT INTO attempts (id, run_id, number, state, started_at) VALUES ($1, $2, 1, 'Running', $3)`, [`${id}/agent/1`, id, at(42)]);
    const before = await row();
    expect(
      await writes(`UPDATE attempts SET state = 'Failed', ended_at = $2, failure_category = 'infra', cost_usd = 0.3, duration_ms = 60000 WHERE id = $1`, [
        `${id}/agent/1`,
        at(102),
      ]),
    ).toEqual({ rowVersions: 1, toastChunks: 0 });
    const after = await row();
    expect(after).toMatchObject({ failures: { infra: 1 } });
    for (const times of ["to_start_ms", "to_pull_request_ms", "to_merge_ms", "merged_pull_requests"]) expect(after?.[times]).toBe(before?.[times]);
    await matchesTheRuns();

    // it is started again later: its time is replaced
    expect(await writes(`UPDATE runs SET started_at = $2 WHERE id = $1`, [id, at(150)])).toMatchObject({ rowVersions: 1 });
    await matchesTheRuns();

    // its pull request opens: the times to a pull request, stored out of line, are written again (and only in this row)
    const opened = await writes(`UPDATE runs SET pull_request_number = 101, pull_request_at = $2 WHERE id = $1`, [id, at(900)]);
    expect(opened.rowVersions).toBe(1);
    expect(opened.toastChunks).toBeGreaterThan(0);
    expect(await row()).toMatchObject({ open: OTHERS + 1, in_progress: 0 });
    await matchesTheRuns();

    // it succeeds: no time changes
    const open = await row();
    expect(await writes(`UPDATE runs SET state = 'Succeeded', ended_at = $2 WHERE id = $1`, [id, at(1000)])).toEqual({ rowVersions: 1, toastChunks: 0 });
    expect((await row())?.to_pull_request_ms).toBe(open?.to_pull_request_ms);
    await matchesTheRuns();

    // its pull request is merged
    expect(
      await writes(`UPDATE runs SET pull_request_state = 'merged', pull_request_closed_at = $2 WHERE id = $1`, [id, at(4000)]),
    ).toMatchObject({ rowVersions: 1 });
    expect(await row()).toMatchObject({ open: OTHERS, merged: 1, merged_pull_requests: "{101}", to_merge_ms: "{4000000}" });
    await matchesTheRuns();
  });

  it("counts a Run that fails, and moves a Run whose day changes to that day's row whole", async () => {
    await insertRun(failing, 2, "Running", 30);
    expect(await writes(`UPDATE runs SET state = 'Failed', ended_at = $2 WHERE id = $1`, [failing, at(600)])).toEqual({ rowVersions: 1, toastChunks: 0 });
    expect(await row()).toMatchObject({ failed: 1 });
    await matchesTheRuns();

    // its trigger's day changes: out of the old row, into the new one (two rows written)
    const nextDay = new Date("2021-03-11T09:00:00Z");
    expect(
      await writes(`UPDATE runs SET received_at = $2, started_at = $3 WHERE id = $1`, [failing, nextDay, new Date(nextDay.getTime() + 30_000)]),
    ).toMatchObject({ rowVersions: 2 });
    expect(await row()).toMatchObject({ runs: OTHERS + 1, failed: 0 });
    expect(await row("2021-03-11")).toMatchObject({ runs: 1, failed: 1, to_start_ms: "{30000}" });
    await matchesTheRuns();

    await db.pool.query(`DELETE FROM attempts WHERE run_id = $1`, [id]);
    await db.pool.query(`DELETE FROM runs WHERE id = ANY($1)`, [[id, failing]]);
    expect(await row()).toMatchObject({ runs: OTHERS, merged: 0, failed: 0 });
    expect(await row("2021-03-11")).toMatchObject({ runs: 0, to_start_ms: "{}" });
    await matchesTheRuns();
  });
});
