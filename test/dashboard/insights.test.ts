import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { insightsRange } from "../../lib/dashboard/insights";
import { projectionFromRest } from "../../lib/loops/projection";
import { metrics } from "../../lib/metrics/metrics";
import type { Db } from "../../lib/store/kernel/db";
import { observation, storeObservations } from "../../lib/triggers/observe-item";
import { testDb } from "../support/db";
import { countedAfresh, rolledUp } from "../support/insights-roll-up";
import { call } from "./support/api-client";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedRepo, seedUser, uniqueInstallationId } from "./support/seed";

// The route handlers read these when called (DATABASE_URL on first use of the pool).
process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
process.env.AUTH_SECRET = "dashboard-insights-test-secret-0123456789";
process.env.GITHUB_WEB_URL = "http://github.test";
const route = await import("../../app/api/v1/insights/route");

/**
 * Insights through GET /api/v1/insights, against a history written to Postgres with exact
 * times, costs and verify results, whose pull requests' merges and closes arrive as a poll's
 * reads do (storeObservations). Every expected figure is worked out by hand in the comments.
 */

const tag = randomBytes(3).toString("hex");
const A = `ins-${tag}/app`;
const B = `ins-${tag}/secret`;
const github = new FakeGitHub();
let db: Db;
const users = {
  reader: { id: 0, login: `reader-${tag}`, token: `tok-r-${tag}` },
  admin: { id: 0, login: `admin-${tag}`, token: `tok-a-${tag}` },
  stranger: { id: 0, login: `stranger-${tag}`, token: `tok-s-${tag}` },
};
const cookies = { reader: "", admin: "", stranger: "" };
// the history is written in November 2026 and moved back a random number of whole weeks, so that
// no other history in the shared database (an earlier run of this file's) falls in its range
const SHIFT_MS = (60 + Math.floor(Math.random() * 3000)) * 7 * 86_400_000;
const at = (iso: string, plusS = 0) => new Date(Date.parse(iso) - SHIFT_MS + plusS * 1000);
const day = (iso: string) => at(`${iso}T00:00:00Z`).toISOString().slice(0, 10);
// in 2020, when no other file has Runs: an admin's Insights count every repository's, and files run side by side
const RANGE = { from: day("2020-11-02"), to: day("2020-11-15") };

interface HistoryRun {
  repo: string;
  number: number;
  loop?: string;
  agent?: string;
  state: "Succeeded" | "Failed" | "Canceled" | "Running";
  received: string;
  startS?: number;
  pr?: { number: number; atS: number };
  attempts?: { state: "Succeeded" | "Failed" | "Running"; costUsd?: number; ms?: number; category?: string; verify?: boolean }[];
}

async function seedHistoryRun(r: HistoryRun): Promise<string> {
  const id = randomBytes(16).toString("hex");
  const received = at(r.received);
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, started_at,
                       ended_at, pull_request_number, pull_request_at)
     VALUES ($1, $1, $2, $3, $4, $5, $6::text::"RunState", $7, 'Do it', false, $8, $9, $10, $11, $12)`,
    [
      id,
      r.loop ?? "start-dev",
      r.repo,
      JSON.stringify(["github", r.repo, r.number]),
      r.number,
      r.state,
      r.agent ?? "demo",
      received,
      r.startS === undefined ? null : at(r.received, r.startS),
      r.state === "Running" ? null : at(r.received, 7200),
      r.pr?.number ?? null,
      r.pr ? at(r.received, r.pr.atS) : null,
    ],
  );
  let n = 0;
  for (const a of r.attempts ?? []) {
    n++;
    await db.pool.query(
      `INSERT INTO attempts (id, run_id, number, state, started_at, ended_at, failure_category, cost_usd, duration_ms, verify)
       VALUES ($1, $2, $3, $4::text::"AttemptState", $5, $5, $6, $7, $8, $9)`,
      [
        `${id}/agent/${n}`,
        id,
        n,
        a.state,
        at(r.received, r.startS ?? 0),
        a.category ?? null,
        a.costUsd ?? null,
        a.ms ?? null,
        a.verify === undefined ? null : JSON.stringify({ passed: a.verify, command: "npm test", durationMs: 1000, tail: "", rounds: 1, timedOut: false, exitCode: a.verify ? 0 : 1 }),
      ],
    );
  }
  return id;
}

/** A poll's read of pull request `number`: open, closed or merged at `closedAt`. */
const pullRead = (repo: string, number: number, state: "open" | "closed" | "merged", closedAt: Date | null) =>
  observation(
    repo,
    projectionFromRest({
      number,
      title: `PR ${number}`,
      state: state === "open" ? "open" : "closed",
      html_url: `http://github.test/${repo}/pull/${number}`,
      created_at: "2020-11-01T00:00:00Z",
      updated_at: (closedAt ?? new Date("2020-11-01T00:00:00Z")).toISOString(),
      closed_at: closedAt?.toISOString() ?? null,
      merged: state === "merged",
      merged_at: state === "merged" ? closedAt!.toISOString() : null,
      head: { ref: `atelier/${number}`, sha: "a".repeat(40) },
      base: { ref: "main" },
    }),
    new Date(),
  );

const mergedCount = async () => (await metrics.runOutcomes.get()).values.find((v) => v.labels.outcome === "merged")?.value ?? 0;
let mergesCounted = 0;
let lateRun = "";

beforeAll(async () => {
  db = testDb(4);
  await github.start();
  process.env.GITHUB_API_URL = github.url;
  const installation = uniqueInstallationId();
  github.installations.set(installation, `ins-${tag}`);
  github.repos.push(
    { fullName: A, installationId: installation, roles: { [users.reader.login]: "read" } },
    { fullName: B, installationId: installation, roles: {} },
  );
  let n = Math.floor(Math.random() * 1e9);
  for (const u of Object.values(users)) u.id = ++n;
  github.users.push(...Object.values(users));
  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [users.admin.login] });
  forgetAccess();
  await seedRepo(db, A, installation);
  await seedRepo(db, B, installation);
  for (const k of Object.keys(users) as (keyof typeof users)[]) cookies[k] = cookieFor(await seedUser(db, users[k], process.env.AUTH_SECRET!));

  // repository A: week of 2 Nov
  await seedHistoryRun({ repo: A, number: 1, state: "Succeeded", received: "2020-11-02T10:00:00Z", startS: 60, pr: { number: 101, atS: 600 },
    attempts: [{ state: "Succeeded", costUsd: 0.5, ms: 120_000, verify: true }] });
  await seedHistoryRun({ repo: A, number: 2, state: "Succeeded", received: "2020-11-03T10:00:00Z", startS: 120, pr: { number: 102, atS: 900 },
    attempts: [{ state: "Failed", costUsd: 0.1, ms: 30_000, category: "infra" }, { state: "Succeeded", costUsd: 0.4, ms: 90_000, verify: false }] });
  // repository A: week of 9 Nov
  await seedHistoryRun({ repo: A, number: 3, agent: "codex", state: "Failed", received: "2020-11-10T09:00:00Z", startS: 300,
    attempts: [{ state: "Failed", costUsd: 0.25, ms: 60_000, category: "agent" }] });
  await seedHistoryRun({ repo: A, number: 4, loop: "review", agent: "codex", state: "Canceled", received: "2020-11-11T12:00:00Z" });
  // its pull request is recorded after GitHub showed it merged: the trigger reads the Item
  lateRun = await seedHistoryRun({ repo: A, number: 5, state: "Succeeded", received: "2020-11-12T08:00:00Z", startS: 30,
    attempts: [{ state: "Succeeded", costUsd: 0.75, ms: 180_000, verify: true }] });
  await seedHistoryRun({ repo: A, number: 6, state: "Succeeded", received: "2020-11-13T08:00:00Z", startS: 45,
    attempts: [{ state: "Succeeded", costUsd: 0.1, ms: 60_000 }] });
  // before the range: never counted
  await seedHistoryRun({ repo: A, number: 7, state: "Succeeded", received: "2020-10-30T08:00:00Z", startS: 10, pr: { number: 107, atS: 20 },
    attempts: [{ state: "Succeeded", costUsd: 9, ms: 9_000_000 }] });
  // repository B, which the reader cannot see
  await seedHistoryRun({ repo: B, number: 1, state: "Succeeded", received: "2020-11-04T10:00:00Z", startS: 90, pr: { number: 201, atS: 1200 },
    attempts: [{ state: "Succeeded", costUsd: 2, ms: 600_000 }] });
  await seedHistoryRun({ repo: B, number: 2, state: "Failed", received: "2020-11-05T10:00:00Z", startS: 20,
    attempts: [{ state: "Failed", costUsd: 1, ms: 120_000, category: "agent" }] });
  await seedHistoryRun({ repo: B, number: 3, state: "Running", received: "2020-11-09T10:00:00Z", startS: 10, pr: { number: 203, atS: 100 },
    attempts: [{ state: "Running" }] });

  // what the poll reads of the pull requests
  const before = await mergedCount();
  await storeObservations(db, [
    pullRead(A, 101, "merged", at("2020-11-02T10:00:00Z", 3600)),
    pullRead(A, 102, "closed", at("2020-11-03T10:00:00Z", 7200)),
    pullRead(A, 105, "merged", at("2020-11-12T08:00:00Z", 1800)),
    pullRead(A, 107, "merged", at("2020-10-30T08:00:00Z", 60)),
    pullRead(B, 201, "merged", at("2020-11-04T10:00:00Z", 5400)),
    pullRead(B, 203, "open", null),
  ]);
  mergesCounted = (await mergedCount()) - before;
  await db.pool.query(`UPDATE runs SET pull_request_number = 105 WHERE id = $1`, [lateRun]);
});

afterAll(async () => {
  setInstanceConfigForTests(undefined);
  await github.stop();
  await db.close();
  expect(github.unexpected).toEqual([]);
});

const insights = (who: keyof typeof users, query: Record<string, string> = {}) =>
  call(route.GET, "GET", "/api/v1/insights", { cookie: cookies[who], query: { ...RANGE, ...query } });

describe("Insights", () => {
  it("records a pull request's merge or close on its Runs, from the poll's read or, when the Run learns it later, from the Item", async () => {
    // 101, 107 and 201 were merged by the read that stored them (105's Run did not have it yet)
    expect(mergesCounted).toBe(3);
    const late = (await db.pool.query(`SELECT pull_request_state, pull_request_closed_at, pull_request_at FROM runs WHERE id = $1`, [lateRun])).rows[0];
    expect(late.pull_request_state).toBe("merged");
    expect(late.pull_request_closed_at.toISOString()).toBe(at("2020-11-12T08:30:00Z").toISOString());
    expect(late.pull_request_at).not.toBeNull();
    // the figures below count its pull request as opened 300 s after its trigger
    await db.pool.query(`UPDATE runs SET pull_request_at = $2 WHERE id = $1`, [lateRun, at("2020-11-12T08:00:00Z", 300)]);
  });

  it("gives an admin the exact figures of both repositories", async () => {
    const res = await insights("admin");
    expect(res.status).toBe(200);
    const body = res.body as unknown as import("../../lib/dashboard/insights").Insights;
    expect(body.filter).toMatchObject(RANGE);
    expect(body.totals).toEqual({
      runs: 9,
      // merged A1 A5 B1 · closed A2 · open B3 (Running, its pull request open) · failed A3 B2 · canceled A4 · none A6
      outcomes: { merged: 3, closed: 1, open: 1, no_pull_request: 1, failed: 2, canceled: 1, in_progress: 0 },
      mergeRate: 0.6, // 3 ÷ (3 + 1 + 1)
      // started after 60 120 300 30 45 90 20 10 s → sorted 10 20 30 45 | 60 90 120 300: the 4th of 8 is the first ≥ 50 %, the 8th the first ≥ 90 %
      triggerToStart: { p50: 45, p90: 300 },
      // 600 900 300 1200 100 → 100 300 600 900 1200: the 3rd of 5, the 5th
      triggerToPullRequest: { p50: 600, p90: 1200 },
      // 3600 1800 5400 → the 2nd of 3, the 3rd
      triggerToMerge: { p50: 3600, p90: 5400 },
      mergedPullRequests: 3,
      // (0.5 + 0.1 + 0.4 + 0.25 + 0.75 + 0.1 + 2 + 1) $ ÷ 3
      costPerMerge: 1.7,
      // (120 + 30 + 90 + 60 + 180 + 60 + 600 + 120) s = 21 min ÷ 3
      agentMinutesPerMerge: 7,
      // Succeeded A1 (1 Attempt) A2 (2) A5 (1) A6 (1) B1 (1): 6 ÷ 5
      attemptsPerSuccess: 1.2,
      verify: { checked: 3, passed: 2, rate: 0.6667 },
    });
    expect(body.failures).toEqual([
      { category: "agent", attempts: 2 },
      { category: "infra", attempts: 1 },
    ]);
    expect(body.weeks.map((w) => [w.week, w.runs, w.outcomes.merged])).toEqual([
      [day("2020-11-02"), 4, 2],
      [day("2020-11-09"), 5, 1],
    ]);
    expect(body.perLoop.map((l) => [l.loop, l.runs, l.outcomes.merged])).toEqual([
      ["start-dev", 8, 3],
      ["review", 1, 0],
    ]);
    expect(body.perAgent.map((a) => [a.agent, a.runs, a.outcomes.failed])).toEqual([
      ["demo", 7, 1],
      ["codex", 2, 1],
    ]);
  });

  it("gives a reader the figures of the repository they see, and none of the other's", async () => {
    const res = await insights("reader");
    expect(res.status).toBe(200);
    const body = res.body as unknown as import("../../lib/dashboard/insights").Insights;
    expect(body.repos).toEqual([A]);
    expect(body.totals).toMatchObject({
      runs: 6,
      outcomes: { merged: 2, closed: 1, open: 0, no_pull_request: 1, failed: 1, canceled: 1, in_progress: 0 },
      mergeRate: 0.6667, // 2 ÷ 3
      triggerToStart: { p50: 60, p90: 300 }, // 30 45 60 | 120 300
      triggerToPullRequest: { p50: 600, p90: 900 }, // 300 600 900
      triggerToMerge: { p50: 1800, p90: 3600 },
      costPerMerge: 1.05, // 2.10 $ ÷ 2
      agentMinutesPerMerge: 4.5, // 9 min ÷ 2
      attemptsPerSuccess: 1.25, // 5 ÷ 4
      verify: { checked: 3, passed: 2, rate: 0.6667 },
    });
    expect(JSON.stringify(body)).not.toContain(B);
    // asking for the hidden repository by name gives nothing of it
    const hidden = await insights("reader", { repo: B });
    expect(hidden.status).toBe(200);
    expect((hidden.body as { totals: { runs: number } }).totals.runs).toBe(0);
    expect(((hidden.body as { weeks: { runs: number }[] }).weeks).every((w) => w.runs === 0)).toBe(true);
    // nor does someone who sees no repository
    expect(((await insights("stranger")).body as { totals: { runs: number } }).totals.runs).toBe(0);
  });

  it("filters by Loop and agent as the Runs list does", async () => {
    const review = (await insights("admin", { loop: "review" })).body as { totals: { runs: number; outcomes: { canceled: number } } };
    expect(review.totals).toMatchObject({ runs: 1, outcomes: { canceled: 1 } });
    const codex = (await insights("admin", { agent: "codex", repo: A })).body as { totals: { runs: number; triggerToStart: unknown } };
    expect(codex.totals).toMatchObject({ runs: 2, triggerToStart: { p50: 300, p90: 300 } });
  });

  it("refuses a bad range with a stable token, never a 500", async () => {
    const bad: Record<string, string>[] = [{ from: "2026-02-30" }, { from: "2026-11-20", to: "2026-11-01" }, { from: "2024-01-01", to: "2026-01-01" }, { from: "yesterday" }];
    for (const query of bad) {
      const res = await insights("admin", query);
      expect(res.status).toBe(400);
      expect(["invalid_insights_range", "invalid_query"]).toContain(res.body.error);
    }
    expect(insightsRange({}, new Date("2026-11-18T12:00:00Z")).from.toISOString()).toBe("2026-08-31T00:00:00.000Z");
  });
});

describe("the roll-up Insights read (ADR 0092)", () => {
  const bucket = async (received: string) =>
    (
      await db.pool.query(
        `SELECT d.runs, d.in_progress, d.failed, d.open, d.merged, d.succeeded, d.failures, d.to_start_ms::text[] AS to_start_ms, d.to_merge_ms::text[] AS to_merge_ms,
                d.merged_pull_requests
           FROM insights_days d JOIN repositories p ON p.id = d.repository_id
          WHERE p.full_name = $1 AND d.day = $2::date AND d.loop = 'late-loop' AND d.agent = 'demo'`,
        [A, day(received)],
      )
    ).rows[0];
  const matchesTheRuns = async () => expect(await rolledUp(db, [A, B])).toEqual(await countedAfresh(db, [A, B]));

  it("holds what a fresh count of the Runs gives", async () => {
    await matchesTheRuns();
  });

  it("moves a Run between buckets as its state, outcome and day change, and lets it go when it is deleted", async () => {
    // days after the range the figures above read
    const id = await seedHistoryRun({ repo: A, number: 20, loop: "late-loop", state: "Running", received: "2020-11-20T10:00:00Z" });
    await db.pool.query(`UPDATE runs SET state = 'Queued', started_at = NULL, ended_at = NULL WHERE id = $1`, [id]);
    expect(await bucket("2020-11-20")).toMatchObject({ runs: 1, in_progress: 1, to_start_ms: [] });

    await db.pool.query(`UPDATE runs SET state = 'Running', started_at = $2 WHERE id = $1`, [id, at("2020-11-20T10:00:00Z", 42)]);
    expect(await bucket("2020-11-20")).toMatchObject({ runs: 1, in_progress: 1, to_start_ms: ["42000"] });
    // its Attempt fails: the Run's sums (attempts_roll_up_into_run) and then its bucket follow
    await db.pool.query(
      `INSERT INTO attempts (id, run_id, number, state, started_at) VALUES ($1, $2, 1, 'Running', now())`,
      [`${id}/agent/1`, id],
    );
    await db.pool.query(`UPDATE attempts SET state = 'Failed', ended_at = now(), failure_category = 'infra', cost_usd = 0.3 WHERE id = $1`, [`${id}/agent/1`]);
    await db.pool.query(`UPDATE runs SET state = 'Failed', ended_at = now() WHERE id = $1`, [id]);
    expect(await bucket("2020-11-20")).toMatchObject({ runs: 1, in_progress: 0, failed: 1, failures: { infra: 1 } });
    await matchesTheRuns();

    // retried, it succeeds with a pull request, which GitHub then shows merged
    await db.pool.query(`UPDATE runs SET state = 'Succeeded', pull_request_number = 120, pull_request_at = $2 WHERE id = $1`, [id, at("2020-11-20T10:00:00Z", 500)]);
    expect(await bucket("2020-11-20")).toMatchObject({ failed: 0, open: 1, succeeded: 1 });
    await storeObservations(db, [pullRead(A, 120, "merged", at("2020-11-20T10:00:00Z", 900))]);
    expect(await bucket("2020-11-20")).toMatchObject({ runs: 1, open: 0, merged: 1, to_merge_ms: ["900000"], merged_pull_requests: [120], failures: { infra: 1 } });
    await matchesTheRuns();

    // its trigger's day moves it to another bucket whole
    await db.pool.query(`UPDATE runs SET received_at = $2 WHERE id = $1`, [id, at("2020-11-21T10:00:00Z")]);
    expect(await bucket("2020-11-20")).toMatchObject({ runs: 0, merged: 0, to_start_ms: [], to_merge_ms: [], merged_pull_requests: [], failures: { infra: 0 } });
    expect(await bucket("2020-11-21")).toMatchObject({ runs: 1, merged: 1, merged_pull_requests: [120], failures: { infra: 1 } });
    await matchesTheRuns();

    await db.pool.query(`DELETE FROM attempts WHERE run_id = $1`, [id]);
    await db.pool.query(`DELETE FROM runs WHERE id = $1`, [id]);
    expect(await bucket("2020-11-21")).toMatchObject({ runs: 0, merged: 0, merged_pull_requests: [] });
    await matchesTheRuns();
  });

  it("counts a pull request merged by two Runs once, and keeps the other Run's time", async () => {
    const week = { from: day("2020-11-23"), to: day("2020-11-29") };
    await seedHistoryRun({ repo: A, number: 30, loop: "late-loop", state: "Succeeded", received: "2020-11-23T10:00:00Z", startS: 5, pr: { number: 130, atS: 50 } });
    await seedHistoryRun({ repo: A, number: 30, loop: "late-loop", state: "Succeeded", received: "2020-11-24T10:00:00Z", startS: 7, pr: { number: 130, atS: 10 } });
    await storeObservations(db, [pullRead(A, 130, "merged", at("2020-11-25T10:00:00Z"))]);
    const body = (await insights("admin", week)).body as unknown as import("../../lib/dashboard/insights").Insights;
    expect(body.totals).toMatchObject({ runs: 2, outcomes: { merged: 2 }, mergedPullRequests: 1, triggerToStart: { p50: 5, p90: 7 }, triggerToMerge: { p50: 86_400, p90: 172_800 } });
    await matchesTheRuns();
  });
});
