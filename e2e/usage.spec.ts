import { admission } from "../lib/metering/admission";
import { finishAttempt } from "../lib/store/runs/attempts";
import { beginAttempt } from "../test/support/attempts";
import { createDb } from "../lib/store/kernel/db";
import { recordAndClaim } from "../lib/store/runs/claim";
import { itemEventKey, itemKey } from "../lib/engine/ids";
import { projectionFromRest } from "../lib/loops/projection";
import { observation, storeObservations } from "../lib/triggers/observe-item";
import { expect, registerDemoRepo, signIn, sim, stack, test } from "./support";

/**
 * The Usage page on real Attempts: Runs opened through the claim and the admission gate,
 * Attempts begun and finished through the store (what the runner does), with the usage the
 * agent reported or an estimate; then the page's inline SVG charts in Chromium. Two of them
 * opened a pull request, one merged as the poll reads it: Insights charts their outcomes, and the
 * Run page says how long from the trigger to the agent's start.
 */

const REPO = "demo-org/webapp";

test.describe.configure({ mode: "serial" });

const runIds: string[] = [];

/** A poll's read of pull request `number` of REPO, merged now or still open. */
const pullRead = (number: number, merged: boolean) =>
  observation(
    REPO,
    projectionFromRest({
      number,
      title: `Agent change ${number}`,
      state: merged ? "closed" : "open",
      html_url: `http://github.test/${REPO}/pull/${number}`,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      closed_at: merged ? new Date().toISOString() : null,
      merged,
      merged_at: merged ? new Date().toISOString() : null,
      head: { ref: `atelier/usage-${number}`, sha: "b".repeat(40) },
      base: { ref: "main" },
    }),
    new Date(),
  );

/** Cost, agent milliseconds, estimated?, and how many days before today the Attempt ended (kept in this month). */
const ATTEMPTS: [number, number, boolean, number][] = [
  [1.2, 240_000, false, 0],
  [0.35, 60_000, true, 0],
  [2.5, 420_000, false, 1],
  [0.8, 120_000, false, 3],
];

test.beforeAll(async () => {
  const db = createDb(stack.databaseUrl, 2);
  try {
    await registerDemoRepo(db.pool, REPO);
    // a private repository of the installation octo-writer cannot see: the installation's
    // limits, which carry its whole spend, are not theirs to read (ADR 0052)
    await sim("createRepo", { owner: "demo-org", name: "usage-unseen", private: true });
    await sim("addRepository", { repo: "demo-org/usage-unseen" });
    await registerDemoRepo(db.pool, "demo-org/usage-unseen");
    const gate = admission();
    const today = new Date().getUTCDate();
    for (const [i, [cost, ms, estimated, daysAgo]] of ATTEMPTS.entries()) {
      const number = 960 + i;
      const hash = `usage-e2e-${Date.now()}-${i}`;
      const claim = await recordAndClaim(
        db,
        {
          id: itemEventKey("start-dev", REPO, number, hash, 0),
          kind: "item",
          loop: "start-dev",
          repo: REPO,
          itemKey: itemKey(REPO, number),
          number,
          contentHash: hash,
          generation: 0,
          submission: { prompt: `Usage #${number}`, agent: "demo", approvalRequired: false, maxCycles: null },
        },
        gate,
      );
      if (claim.tag !== "Claimed") throw new Error(`the claim said ${JSON.stringify(claim)}`);
      runIds.push(claim.runId);
      const begun = await beginAttempt(db, claim.runId, { token: `usage-e2e-${i}`, workerId: "usage-e2e" });
      if (begun.tag !== "Started") throw new Error("the Attempt did not start");
      await finishAttempt(db, begun.attempt, {
        tag: "Succeeded",
        summary: "usage e2e",
        usage: { durationMs: ms, tokensIn: 1000 * (i + 1), tokensOut: 100 * (i + 1), costUsd: cost, costEstimated: estimated },
        branch: i < 2 ? `atelier/usage-${990 + i}` : null,
        pullRequestNumber: i < 2 ? 990 + i : null,
        headSha: null,
      });
      const back = Math.min(daysAgo, today - 1); // stay inside this UTC month
      await db.pool.query(`UPDATE attempts SET ended_at = ended_at - make_interval(days => $2) WHERE id = $1`, [begun.attempt.id, back]);
    }
    // the poll reads the pull requests: the first merged, the second still open
    await storeObservations(db, [pullRead(990, true), pullRead(991, false)]);
  } finally {
    await db.close();
  }
});

test("the Usage page charts cost, agent time and Runs per day, and breaks them down", async ({ page }, info) => {
  await signIn(page, "octo-writer");
  await page.goto(`/usage?repo=${REPO}`);

  const cost = page.getByTestId("usage-chart-cost");
  await expect(cost).toBeVisible();
  await expect(page.getByTestId("usage-chart-minutes")).toBeVisible();
  await expect(page.getByTestId("usage-chart-runs")).toBeVisible();
  // one bar per day of the month; the days with Attempts are drawn with their value
  const bars = cost.getByTestId("chart-bar");
  expect(await bars.count()).toBeGreaterThanOrEqual(28);
  const drawn = await bars.evaluateAll((els) =>
    els.filter((e) => Number(e.getAttribute("data-value")) > 0).map((e) => ({ value: Number(e.getAttribute("data-value")), height: Number(e.getAttribute("height")) })),
  );
  expect(drawn.length).toBeGreaterThanOrEqual(1);
  expect(drawn.every((b) => b.height > 0)).toBe(true);
  const sum = drawn.reduce((s, b) => s + b.value, 0);
  expect(sum).toBeGreaterThanOrEqual(4.85 - 1e-9);
  await expect(page.getByTestId("usage-total-cost")).toHaveText(/^\$\d+\.\d\d$/);
  // every chart's scale has ticks whose labels differ
  for (const chart of ["usage-chart-cost", "usage-chart-minutes", "usage-chart-runs"]) {
    const ticks = await page.getByTestId(chart).getByTestId("chart-tick").allTextContents();
    expect(new Set(ticks).size, chart).toBe(ticks.length);
    expect(ticks.length, chart).toBeGreaterThanOrEqual(2);
  }

  await expect(page.getByTestId("usage-by-repo").getByTestId("usage-row").filter({ hasText: REPO })).toBeVisible();
  await expect(page.getByTestId("usage-by-loop")).toContainText("start-dev");
  await expect(page.getByTestId("usage-by-agent").getByTestId("usage-row").filter({ hasText: "demo" })).toContainText("≈");
  // the repository's limits, with how near each is; not the installation's, since octo-writer
  // does not see every repository of it; only admins may change them
  await expect(page.locator('[data-testid="cap-owner"][data-scope="repository"]')).toContainText(REPO);
  await expect(page.locator('[data-testid="cap-owner"][data-scope="installation"]')).toHaveCount(0);
  await expect(page.getByTestId("quota-form")).toHaveCount(0);
  await page.screenshot({ path: info.outputPath("usage.png"), fullPage: true });
});

test("a person who is not an admin cannot change a limit through the API", async ({ page }) => {
  await signIn(page, "octo-writer");
  const answer = await page.evaluate(async (repo) => {
    const res = await fetch(`/api/v1/quotas/repositories/${repo}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ monthly_runs: 1 }),
    });
    return { status: res.status, body: await res.json() };
  }, REPO);
  expect(answer).toMatchObject({ status: 403, body: { error: "admin_only" } });
});

test("Insights charts what became of the Runs, each figure one click from its definition", async ({ page }, info) => {
  await signIn(page, "octo-writer");
  await page.goto(`/insights?repo=${REPO}`);
  const weekly = page.getByTestId("insights-weekly-outcomes");
  await expect(weekly).toBeVisible();
  // this week's column holds this spec's Runs (1 merged, 1 open, 2 without a pull request) beside
  // those earlier specs left in the same repository; test/dashboard/insights.test.ts checks the
  // exact figures, this checks that the chart draws what the figures say
  const segments = await weekly.getByTestId("outcome-segment").evaluateAll((els) =>
    els.map((e) => ({ outcome: e.getAttribute("data-outcome"), value: Number(e.getAttribute("data-value")), height: Number(e.getAttribute("height")) })),
  );
  const total = (o: string) => segments.filter((s) => s.outcome === o).reduce((n, s) => n + s.value, 0);
  expect(total("merged")).toBeGreaterThanOrEqual(1);
  expect(total("open")).toBeGreaterThanOrEqual(1);
  expect(total("no_pull_request")).toBeGreaterThanOrEqual(2);
  expect(segments.every((s) => s.height > 0)).toBe(true);
  await expect(page.locator('[data-testid="insights-outcome"][data-outcome="merged"]')).toHaveAttribute("data-value", String(total("merged")));
  await expect(page.getByTestId("insights-merge-rate")).toHaveText(/^\d+(\.\d)? %$/);
  await expect(page.getByTestId("insights-weekly-merge-rate")).toBeVisible();
  await expect(page.getByTestId("insights-per-loop").getByTestId("insights-group").filter({ hasText: "start-dev" })).toBeVisible();
  // a figure's name leads to its definition
  await page.getByRole("link", { name: "Merge rate" }).first().click();
  await expect(page).toHaveURL(/#def-merge-rate$/);
  await expect(page.locator("#def-merge-rate")).toContainText("divided by the Runs that had a pull request");
  await page.screenshot({ path: info.outputPath("insights.png"), fullPage: true });

  // the Run page says how long from its trigger to its agent's start
  await page.goto(`/runs/${runIds[0]}`);
  await expect(page.getByTestId("run-trigger-to-start")).toHaveText(/^\d+(\.\d)? (s|min|h)$/);
  await page.screenshot({ path: info.outputPath("run-trigger-to-start.png"), fullPage: true });
});
