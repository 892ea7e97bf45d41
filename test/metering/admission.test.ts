import { afterAll, describe, expect, it } from "vitest";
import { loadNeedsYou } from "../../lib/dashboard/needs-you";
import { toHttpError } from "../../lib/errors";
import { admission, admitAttempt, assertAdmitted, evaluateAdmission } from "../../lib/metering/admission";
import { DEFAULT_REPO_OPEN_RATE_PER_MINUTE } from "../../lib/store/metering/repo-metering";
import { monthKey } from "../../lib/metering/month";
import { countQuotaRefusals, listQuotaRefusals, quotaBlockedItems } from "../../lib/metering/quota-refusals";
import { installationScope, repoScope } from "../../lib/metering/scopes";
import { readMonthUsage, type MonthUsage } from "../../lib/store/metering/admission-rows";
import type { Queryable } from "../../lib/store/kernel/sql";
import { beginAttempt } from "../support/attempts";
import { recordAndClaim, type Admission } from "../../lib/store/runs/claim";
import { readRunSnapshot } from "../../lib/store/runs/start-basis";
import { transaction } from "../../lib/store/kernel/transaction";
import { testDb } from "../support/db";
import { itemEvent } from "../support/events";
import { openRun, seedRepository, seedTenant, setLimits, startAttempt, succeedWithCost, type Tenant } from "./support";

const db = testDb();
afterAll(() => db.close());
const gate = admission();

/** The month's usage of the tenant's repository (its counter) and of its installation (the sum of its repositories'). */
async function counters(t: Tenant, on: Queryable = db.pool): Promise<{ installation: MonthUsage | null; repository: MonthUsage }> {
  return readMonthUsage(on, { scope: repoScope(t.repo), month: monthKey(new Date()), mode: "peek", installationId: t.installationId });
}

async function bucket(scope: string): Promise<{ tokens: number; refilled_at: Date } | null> {
  const { rows } = await db.pool.query(`SELECT tokens, refilled_at FROM rate_buckets WHERE scope = $1`, [scope]);
  return rows[0] ?? null;
}

const waitingReason = async (runId: string) =>
  (await db.pool.query(`SELECT waiting_reason FROM runs WHERE id = $1`, [runId])).rows[0].waiting_reason as string | null;

describe("opens the gate has nothing to ask of", () => {
  it("count on the month's counters like any admitted open, and take a token of the repository's default open rate", async () => {
    const t = await seedTenant(db);
    const first = await recordAndClaim(db, itemEvent(t.repo, 1, "a"), gate);
    const second = await recordAndClaim(db, itemEvent(t.repo, 2, "a"), gate);
    for (const claim of [first, second]) expect(claim).toMatchObject({ tag: "Claimed", opened: true });
    expect((await bucket(repoScope(t.repo)))!.tokens).toBeGreaterThanOrEqual(DEFAULT_REPO_OPEN_RATE_PER_MINUTE - 2);
    expect((await bucket(repoScope(t.repo)))!.tokens).toBeLessThan(DEFAULT_REPO_OPEN_RATE_PER_MINUTE - 1);
    expect(await recordAndClaim(db, itemEvent(t.repo, 1, "a"), gate)).toMatchObject({ tag: "Claimed", opened: false }); // a repeat counts nothing
    expect(await counters(t)).toEqual({ installation: { runs: 2, cost: 0 }, repository: { runs: 2, cost: 0 } });
    // once a quota is set, the gate sees those two
    await setLimits(db, { repo: t.repo }, { monthly_runs: 3 });
    const gated = await recordAndClaim(db, itemEvent(t.repo, 3, "a"), gate);
    expect(gated).toMatchObject({ tag: "Claimed", opened: true });
    expect(gated).not.toHaveProperty("openedRun");
    expect((await readRunSnapshot(db, (gated as { runId: string }).runId))!.admissionGated).toBe(true);
    expect(await recordAndClaim(db, itemEvent(t.repo, 4, "a"), gate)).toMatchObject({ tag: "Blocked", reason: "repo_quota_exceeded" });
  });

  it("start an Attempt without asking the gate: a Run of a repository with no quota reads as ungated", async () => {
    const t = await seedTenant(db);
    const runId = await openRun(db, t.repo, 1, gate);
    expect((await readRunSnapshot(db, runId))!.admissionGated).toBe(false);
    await setLimits(db, { installationId: t.installationId }, { max_concurrent: 5 });
    expect((await readRunSnapshot(db, runId))!.admissionGated).toBe(true);
  });
});

describe("the default open rate of a repository (attack 12)", () => {
  it(`opens at most ${DEFAULT_REPO_OPEN_RATE_PER_MINUTE} Runs a minute in a repository that sets no rate of its own; its own rate replaces it`, async () => {
    const t = await seedTenant(db);
    const claims = [];
    const started = Date.now();
    for (let n = 1; n <= DEFAULT_REPO_OPEN_RATE_PER_MINUTE + 10; n++) claims.push(await recordAndClaim(db, itemEvent(t.repo, n, "burst"), gate));
    // a slow machine refills a token every 2 s meanwhile
    const refilled = Math.ceil(((Date.now() - started) / 60_000) * DEFAULT_REPO_OPEN_RATE_PER_MINUTE);
    const opened = claims.filter((c) => c.tag === "Claimed").length;
    expect(opened).toBeGreaterThanOrEqual(DEFAULT_REPO_OPEN_RATE_PER_MINUTE);
    expect(opened).toBeLessThanOrEqual(DEFAULT_REPO_OPEN_RATE_PER_MINUTE + refilled);
    expect(claims.filter((c) => c.tag !== "Claimed")).toEqual(Array(claims.length - opened).fill({ tag: "Blocked", reason: "rate_limited", superseded: null }));
    const own = await seedTenant(db);
    await setLimits(db, { repo: own.repo }, { open_rate_per_minute: DEFAULT_REPO_OPEN_RATE_PER_MINUTE + 10 });
    for (let n = 1; n <= DEFAULT_REPO_OPEN_RATE_PER_MINUTE + 2; n++) {
      expect(await recordAndClaim(db, itemEvent(own.repo, n, "burst"), gate)).toMatchObject({ tag: "Claimed", opened: true });
    }
  });

  it("eight opens racing for the last three tokens, each in its one statement: three open, the rest are refused", async () => {
    const t = await seedTenant(db);
    await openRun(db, t.repo, 1, gate);
    const started = Date.now(); // before the bucket's refill time: what refilled is not undercounted
    await db.pool.query(`UPDATE rate_buckets SET tokens = 3, refilled_at = now() WHERE scope = $1`, [repoScope(t.repo)]);
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => recordAndClaim(db, itemEvent(t.repo, i + 2, "race"), gate)));
    const refilled = Math.floor(((Date.now() - started) / 60_000) * DEFAULT_REPO_OPEN_RATE_PER_MINUTE + 1e-9);
    const opened = claims.filter((c) => c.tag === "Claimed").length;
    expect(opened).toBeGreaterThanOrEqual(3);
    expect(opened).toBeLessThanOrEqual(3 + refilled);
    expect(claims.filter((c) => c.tag !== "Claimed")).toEqual(Array(8 - opened).fill({ tag: "Blocked", reason: "rate_limited", superseded: null }));
  });

  it("an Event that supersedes an unstarted Run when no token is left: the supersede stands, the refusal names the rate", async () => {
    const t = await seedTenant(db);
    const pending = await openRun(db, t.repo, 1, gate);
    // refilled "in an hour": no token comes back meanwhile, however slow the machine
    await db.pool.query(`UPDATE rate_buckets SET tokens = 0, refilled_at = now() + interval '1 hour' WHERE scope = $1`, [repoScope(t.repo)]);
    expect(await recordAndClaim(db, itemEvent(t.repo, 1, "h1-edited"), gate)).toEqual({ tag: "Blocked", reason: "rate_limited", superseded: pending });
    const { rows } = await db.pool.query(`SELECT state, cancel_reason FROM runs WHERE id = $1`, [pending]);
    expect(rows[0]).toEqual({ state: "Canceled", cancel_reason: "Superseded" });
    expect((await bucket(repoScope(t.repo)))!.tokens).toBeLessThan(1); // the refused open took nothing
  });
});

describe("one admission gate, in a fixed order", () => {
  it("answers each cap in turn, set all at once then lifted one by one, on the open, the start and the API", async () => {
    const t = await seedTenant(db);
    const inst = { installationId: t.installationId };
    // three Runs under a 3-per-minute rate: A spends $2.00, B is Running, C waits to start
    await setLimits(db, inst, { open_rate_per_minute: 3 });
    const a = await openRun(db, t.repo, 1, gate);
    const b = await openRun(db, t.repo, 2, gate);
    const c = await openRun(db, t.repo, 3, gate);
    await succeedWithCost(db, a, 2);
    await startAttempt(db, b);
    expect(await counters(t)).toEqual({ installation: { runs: 3, cost: 2 }, repository: { runs: 3, cost: 2 } });

    // every limit reached at once
    await db.pool.query(`UPDATE installations SET suspended_at = now() WHERE id = $1`, [t.installationId]);
    await setLimits(db, { repo: t.repo }, { monthly_runs: 3 });
    await setLimits(db, inst, { max_concurrent: 1, monthly_cost_usd: 1, monthly_runs: 3 });

    const steps: { api: string | null; open: string; start: string | null }[] = [];
    const observe = async (n: number) => {
      const api = await evaluateAdmission(db, { repo: t.repo, runId: c }, ["open", "attempt"]);
      const claim = await recordAndClaim(db, itemEvent(t.repo, 10 + n, `blocked-${n}`), gate);
      const start = await admitAttempt(db, c);
      steps.push({ api: api?.token ?? null, open: claim.tag === "Blocked" ? claim.reason : claim.tag, start: start?.token ?? null });
    };

    await observe(0);
    await db.pool.query(`UPDATE installations SET suspended_at = NULL WHERE id = $1`, [t.installationId]);
    await observe(1);
    await setLimits(db, { repo: t.repo }, { monthly_runs: 0 });
    await observe(2);
    expect(await waitingReason(c)).toBe("quota:concurrency_cap_exceeded");
    await setLimits(db, inst, { max_concurrent: 0 });
    await observe(3);
    await setLimits(db, inst, { open_rate_per_minute: 0 });
    await observe(4);
    // over both monthly limits, the run quota answers first (the start never asks it)
    await setLimits(db, inst, { monthly_runs: 0 });
    await observe(5);
    await setLimits(db, inst, { monthly_cost_usd: 0 });
    await observe(6);
    expect(await waitingReason(c)).toBeNull();

    expect(steps).toEqual([
      { api: "installation_suspended", open: "installation_suspended", start: "installation_suspended" },
      { api: "repo_quota_exceeded", open: "repo_quota_exceeded", start: "concurrency_cap_exceeded" },
      { api: "concurrency_cap_exceeded", open: "rate_limited", start: "concurrency_cap_exceeded" },
      { api: "rate_limited", open: "rate_limited", start: "monthly_cost_cap_exceeded" },
      { api: "monthly_run_quota_exceeded", open: "monthly_run_quota_exceeded", start: "monthly_cost_cap_exceeded" },
      { api: "monthly_cost_cap_exceeded", open: "monthly_cost_cap_exceeded", start: "monthly_cost_cap_exceeded" },
      { api: null, open: "Claimed", start: null },
    ]);
    // only the admitted open counted
    expect((await counters(t)).installation!.runs).toBe(4);
  });

  it("answers each limit's refusal as the API's edge maps it (toHttpError): status, Retry-After and reset_at; dispatch-and-tokens.test.ts calls the route", async () => {
    const t = await seedTenant(db);
    const a = await openRun(db, t.repo, 1, gate);
    await succeedWithCost(db, a, 3);
    await setLimits(db, { installationId: t.installationId }, { monthly_cost_usd: 2.5 });
    const refused = await assertAdmitted(db, { repo: t.repo }, ["open"]).catch((e: unknown) => toHttpError(e));
    expect(refused).toMatchObject({
      status: 402,
      body: { error: "monthly_cost_cap_exceeded", limit: 2.5, used: 3, unit: "usd", reset_at: expect.stringMatching(/-01T00:00:00.000Z$/) },
    });

    await setLimits(db, { installationId: t.installationId }, { monthly_cost_usd: 0, max_concurrent: 1 });
    const b = await openRun(db, t.repo, 2, gate);
    const c = await openRun(db, t.repo, 3, gate);
    await startAttempt(db, b);
    // an operator's retry (or any start) of c would take a second slot
    const busy = await assertAdmitted(db, { repo: t.repo, runId: c }, ["attempt"]).catch((e: unknown) => toHttpError(e));
    expect(busy).toMatchObject({ status: 429, headers: { "retry-after": "30" }, body: { error: "concurrency_cap_exceeded", limit: 1, used: 1 } });
    // the Run already running is never held by its own slot
    await expect(admitAttempt(db, b)).resolves.toBeNull();
  });

  it("the instance's concurrency_reserve lowers every set cap (never below one) and leaves an unset one unlimited", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { installationId: t.installationId }, { max_concurrent: 3 });
    const runs = [];
    for (let n = 1; n <= 4; n++) runs.push(await openRun(db, t.repo, n, gate));
    await startAttempt(db, runs[0]!);
    await startAttempt(db, runs[1]!);
    // a cap of 3 with 1 held back for other workloads: 2 run
    expect(await admitAttempt(db, runs[2]!)).toBeNull();
    const refused = await admitAttempt(db, runs[2]!, undefined, 1);
    expect(refused).toMatchObject({ token: "concurrency_cap_exceeded", details: { limit: 2, used: 2 } });
    expect(await waitingReason(runs[2]!)).toBe("quota:concurrency_cap_exceeded");
    const busy = await assertAdmitted(db, { repo: t.repo, runId: runs[2]!, concurrencyReserve: 1 }, ["attempt"]).catch((e: unknown) => toHttpError(e));
    expect(busy).toMatchObject({ status: 429, headers: { "retry-after": "30" }, body: { error: "concurrency_cap_exceeded", limit: 2 } });
    // a reserve as large as the cap still lets one run: here two already do
    expect(await admitAttempt(db, runs[2]!, undefined, 5)).toMatchObject({ details: { limit: 1 } });
    // no cap set: nothing to lower
    await setLimits(db, { installationId: t.installationId }, { max_concurrent: 0 });
    expect(await admitAttempt(db, runs[2]!, undefined, 1)).toBeNull();
  });

  it("admits freely when a repository is not registered (no limits are known for it)", async () => {
    const r = await recordAndClaim(db, itemEvent(`unregistered-${Date.now()}/x`, 1, "h"), gate);
    expect(r.tag).toBe("Claimed");
  });
});

describe("a quota that refuses the Run of an Event that supersedes another", () => {
  it("still cancels the unstarted Run it supersedes, in the statement that records the refusal", async () => {
    const t = await seedTenant(db);
    const pending = await openRun(db, t.repo, 1, gate); // unstarted: the newer content of #1 supersedes it
    await setLimits(db, { repo: t.repo }, { monthly_runs: 1 });
    expect(await recordAndClaim(db, itemEvent(t.repo, 1, "h1-edited"), gate)).toEqual({ tag: "Blocked", reason: "repo_quota_exceeded", superseded: pending });
    const { rows } = await db.pool.query(`SELECT state, cancel_reason FROM runs WHERE id = $1`, [pending]);
    expect(rows[0]).toEqual({ state: "Canceled", cancel_reason: "Superseded" });
  });
});

describe("refunds", () => {
  it("a refused open takes no rate token and no run from the quota", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { installationId: t.installationId }, { open_rate_per_minute: 2 });
    const a = await openRun(db, t.repo, 1, gate);
    await succeedWithCost(db, a, 5);
    await setLimits(db, { installationId: t.installationId }, { monthly_cost_usd: 1 });
    const before = { bucket: await bucket(installationScope(t.installationId)), counters: await counters(t) };
    expect(before.bucket!.tokens).toBeCloseTo(1, 1);

    const r = await recordAndClaim(db, itemEvent(t.repo, 2, "h2"), gate);
    expect(r).toMatchObject({ tag: "Blocked", reason: "monthly_cost_cap_exceeded" });
    expect(await bucket(installationScope(t.installationId))).toEqual(before.bucket);
    expect(await counters(t)).toEqual(before.counters);
  });

  it("an open rolled back after the gate admitted it gives back its rate token and its run", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { installationId: t.installationId }, { open_rate_per_minute: 2, monthly_runs: 5 });
    await openRun(db, t.repo, 1, gate);
    const before = { bucket: await bucket(installationScope(t.installationId)), counters: await counters(t) };

    // the gate admits and charges, then the open fails inside the same claim transaction
    const failsAfterAdmission: Admission = async (sql, event) => {
      const refusal = await gate(sql, event);
      if (refusal) return refusal;
      expect((await counters(t, sql)).installation!.runs).toBe(2);
      throw new Error("the Run could not be written");
    };
    await expect(recordAndClaim(db, itemEvent(t.repo, 2, "h2"), failsAfterAdmission)).rejects.toThrow("could not be written");
    expect(await bucket(installationScope(t.installationId))).toEqual(before.bucket);
    expect(await counters(t)).toEqual(before.counters);

    // and inside any transaction that rolls back
    await expect(
      transaction(db, async (sql) => {
        expect(await gate(sql, itemEvent(t.repo, 3, "h3"))).toBeNull();
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await counters(t)).toEqual(before.counters);
    expect(await bucket(installationScope(t.installationId))).toEqual(before.bucket);
  });

  it("two opens racing for the last run of the month: exactly one gets it", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { installationId: t.installationId }, { monthly_runs: 1 });
    const results = await Promise.all([1, 2, 3, 4].map((n) => recordAndClaim(db, itemEvent(t.repo, n, `race-${n}`), gate)));
    expect(results.filter((r) => r.tag === "Claimed")).toHaveLength(1);
    expect(results.filter((r) => r.tag === "Blocked" && r.reason === "monthly_run_quota_exceeded")).toHaveLength(3);
  });

  it("opens in six repositories of one installation racing for its last two runs of the month: exactly two get them, counted once each", async () => {
    // each repository has a counter row of its own: only the installation's monthly-runs lock
    // makes them read its sum one after another
    const t = await seedTenant(db);
    const repos = [t.repo, ...(await Promise.all([1, 2, 3, 4, 5].map((n) => seedRepository(db, t.installationId, t.account, `repo-${n}`))))];
    await openRun(db, repos[1]!, 1, gate);
    await setLimits(db, { installationId: t.installationId }, { monthly_runs: 3 });
    const results = await Promise.all(repos.map((repo) => recordAndClaim(db, itemEvent(repo, 2, "race"), gate)));
    expect(results.filter((r) => r.tag === "Claimed")).toHaveLength(2);
    expect(results.filter((r) => r.tag === "Blocked" && r.reason === "monthly_run_quota_exceeded")).toHaveLength(4);
    expect((await counters(t)).installation).toEqual({ runs: 3, cost: 0 });
  });
});

describe("concurrency", () => {
  it("asked inside beginAttempt's transaction, three starts racing for the last slot: exactly one gets it", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { installationId: t.installationId }, { max_concurrent: 1 });
    const runs = await Promise.all([1, 2, 3].map((n) => openRun(db, t.repo, n, gate)));
    const starts = await Promise.all(
      runs.map(async (id, i) => {
        const begun = await beginAttempt(db, id, { token: `t${i}`, workerId: "w" });
        return begun.tag === "Refused" ? begun.refusal.token : begun.tag;
      }),
    );
    expect(starts.sort()).toEqual(["Started", "concurrency_cap_exceeded", "concurrency_cap_exceeded"]);
    const reasons = await Promise.all(runs.map(waitingReason));
    expect(reasons.filter((r) => r === "quota:concurrency_cap_exceeded")).toHaveLength(2);
    const states = await db.pool.query(`SELECT state, count(*)::int AS n FROM runs WHERE id = ANY($1) GROUP BY state ORDER BY state`, [runs]);
    expect(states.rows).toEqual([{ state: "Pending", n: 2 }, { state: "Running", n: 1 }]);
  });
});

describe("Needs you", () => {
  it("lists the Items a quota blocked and the Runs it holds, and the Items to re-read", async () => {
    const t = await seedTenant(db);
    await setLimits(db, { installationId: t.installationId }, { max_concurrent: 1 });
    const running = await openRun(db, t.repo, 1, gate);
    const held = await openRun(db, t.repo, 2, gate);
    await startAttempt(db, running);
    expect(await admitAttempt(db, held)).toMatchObject({ token: "concurrency_cap_exceeded" });
    await setLimits(db, { repo: t.repo }, { monthly_runs: 2 });
    const blocked = await recordAndClaim(db, itemEvent(t.repo, 3, "h3"), gate);
    expect(blocked).toMatchObject({ tag: "Blocked", reason: "repo_quota_exceeded" });

    const list = await listQuotaRefusals(db, { repos: [t.repo] });
    expect(list.map((r) => [r.kind, r.token, r.number])).toEqual([
      ["event", "repo_quota_exceeded", 3],
      ["run", "concurrency_cap_exceeded", 2],
    ]);
    expect(list[1]!.runId).toBe(held);
    expect(await countQuotaRefusals(db, { repos: [t.repo] })).toBe(2);
    expect(list[0]!.message).toMatch(/monthly quota/);
    expect(await quotaBlockedItems(db)).toContainEqual({ installationId: t.installationId, repo: t.repo, number: 3 });
    // Needs you lists both, with the token and where to lift the limit, and counts them
    const needs = await loadNeedsYou(db, [t.repo]);
    expect(needs.counts.quota).toBe(2);
    expect(needs.needs.filter((n) => n.kind === "quota").map((n) => [n.number, n.detail?.split(":")[0], n.action.kind])).toEqual([
      [3, "repo_quota_exceeded", "review_quota"],
      [2, "concurrency_cap_exceeded", "review_quota"],
    ]);

    // once lifted, re-claiming the same Event opens its Run and it leaves the list
    await setLimits(db, { repo: t.repo }, { monthly_runs: 0 });
    expect((await recordAndClaim(db, itemEvent(t.repo, 3, "h3"), gate)).tag).toBe("Claimed");
    expect((await listQuotaRefusals(db, { repos: [t.repo] })).map((r) => r.kind)).toEqual(["run"]);
  });
});
