import { afterAll, describe, expect, it } from "vitest";
import { admission } from "../../lib/metering/admission";
import { monthKey } from "../../lib/metering/month";
import { getQuota, quotaInput } from "../../lib/metering/quota-settings";
import { usageReport } from "../../lib/metering/usage-report";
import { testDb } from "../support/db";
import { openRun, seedRepository, seedTenant, setLimits, succeedWithCost } from "./support";

const db = testDb();
afterAll(() => db.close());
const gate = admission();

describe("usage rolled up from Attempts", () => {
  it("a scope with no Attempt yet is all zeros, not nulls (the Usage page of a new instance)", async () => {
    const report = await usageReport(db, { repos: ["nobody-here/none"] });
    expect(report.totals).toEqual({ runs: 0, attempts: 0, minutes: 0, costUsd: 0, estimatedCostUsd: 0, tokensIn: 0, tokensOut: 0 });
  });

  it("sums cost, minutes and Runs per day, repository, Loop and agent, in UTC months", async () => {
    const t = await seedTenant(db);
    const other = await seedRepository(db, t.installationId, t.account, "other");
    const r1 = await openRun(db, t.repo, 1, gate, "start-dev");
    const r2 = await openRun(db, t.repo, 2, gate, "review");
    const r3 = await openRun(db, other, 1, gate, "start-dev");
    const old = await openRun(db, other, 2, gate, "start-dev");
    await succeedWithCost(db, r1, 1.25, 120_000);
    await succeedWithCost(db, r2, null, 30_000); // the agent reported no cost and the roster has no price
    await succeedWithCost(db, r3, 0.5, 60_000, true); // estimated from the price per minute
    await succeedWithCost(db, old, 9, 60_000);
    // the last one ended in the previous UTC month: it is not this month's
    await db.pool.query(
      `UPDATE attempts SET ended_at = date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 millisecond' WHERE run_id = $1`,
      [old],
    );

    const report = await usageReport(db, { repos: [t.repo, other], installationIds: [t.installationId] });
    expect(report.month).toBe(monthKey(new Date()));
    expect(report.totals).toMatchObject({ runs: 3, attempts: 3, minutes: 3.5, costUsd: 1.75, estimatedCostUsd: 0.5, tokensIn: 300, tokensOut: 150 });
    const today = new Date().toISOString().slice(0, 10);
    expect(report.days.find((d) => d.day === today)).toMatchObject({ runs: 3, costUsd: 1.75 });
    expect(report.days.filter((d) => d.costUsd > 0)).toHaveLength(1);
    expect(report.byRepository).toEqual([
      expect.objectContaining({ repo: t.repo, runs: 2, costUsd: 1.25, minutes: 2.5 }),
      expect.objectContaining({ repo: other, runs: 1, costUsd: 0.5, estimatedCostUsd: 0.5 }),
    ]);
    expect(report.byLoop.map((l) => [l.repo, l.loop, l.costUsd])).toEqual([
      [t.repo, "start-dev", 1.25],
      [other, "start-dev", 0.5],
      [t.repo, "review", 0],
    ]);
    expect(report.byAgent).toEqual([expect.objectContaining({ agent: "demo", runs: 3, attempts: 3 })]);

    const previous = await usageReport(db, {
      month: monthKey(new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15))),
      repos: [other],
      installationIds: [],
    });
    expect(previous.totals).toMatchObject({ runs: 1, costUsd: 9 });
  });

  it("shows each limit of the installation and its repositories and how near it is", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { installationId: t.installationId }, { monthly_runs: 4, monthly_cost_usd: 10, open_rate_per_minute: 6 });
    await setLimits(db, { repo: t.repo }, { max_concurrent: 2 });
    const r = await openRun(db, t.repo, 1, gate);
    await succeedWithCost(db, r, 2.5);
    const report = await usageReport(db, { repos: [t.repo], installationIds: [t.installationId] });
    const cap = (scope: string, limit: string) => report.caps.find((c) => c.scope === scope && c.limit === limit)!;
    expect(cap("installation", "monthly_runs")).toMatchObject({ name: t.account, value: 4, used: 1, nearness: 0.25 });
    expect(cap("installation", "monthly_cost_usd")).toMatchObject({ value: 10, used: 2.5, nearness: 0.25 });
    expect(cap("installation", "monthly_cost_usd").resetAt!.toISOString()).toMatch(/-01T00:00:00.000Z$/);
    expect(cap("installation", "open_rate_per_minute").used).toBeGreaterThan(0.9);
    expect(cap("repository", "max_concurrent")).toMatchObject({ name: t.repo, value: 2, used: 0, nearness: 0, resetAt: null });
    expect(cap("repository", "monthly_runs")).toMatchObject({ value: 0, used: 1, nearness: null });
  });
});

describe("quota settings", () => {
  it("keeps the limits not given, and its schema names every bad field", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { repo: t.repo }, { monthly_runs: 5 });
    await setLimits(db, { repo: t.repo }, { max_concurrent: 1 });
    expect((await getQuota(db, { kind: "repository", repo: t.repo })).limits).toEqual({
      monthlyRuns: 5,
      monthlyCostUsd: 0,
      maxConcurrent: 1,
      openRatePerMinute: 0,
    });
    const bad = quotaInput.safeParse({ monthly_runs: -1, monthly_cost_usd: 1.234, burst: 3 });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => i.path.join(".") || i.code)).toEqual(["monthly_runs", "monthly_cost_usd", "unrecognized_keys"]);
    await expect(getQuota(db, { kind: "repository", repo: "nobody/nothing" })).rejects.toMatchObject({ status: 404 });
  });
});
