import { DEMO_CONFIG } from "../lib/sandbox/seed";
import { expect, registerDemoRepo, seedItem, seedRun, sim, signIn, test } from "./support";

/**
 * The dashboard's lists and their edges on rows written straight to Postgres: the Runs list
 * (filters and search kept in the URL, keyset pages, live, the same visibility as the rest),
 * 404s that keep the navigation, relative times that tick, and the Loops page's "check config
 * now" against the simulator's GitHub.
 */

const REPO = "demo-org/webapp";
const runs: Record<number, string> = {};

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  const { Pool } = (await import("pg")).default;
  const db = new Pool({ connectionString: process.env.E2E_DATABASE_URL, max: 1 });
  await registerDemoRepo(db, REPO);
  for (let n = 1201; n <= 1255; n++) {
    await seedItem(db, REPO, n, { title: n === 1207 ? "Runs list: the zebra search" : `Runs list item ${n}` });
    runs[n] = await seedRun(db, REPO, n, n % 5 === 0 ? "Failed" : "Succeeded", { attempt: { state: n % 5 === 0 ? "Failed" : "Succeeded" } });
  }
  await db.end();
});

test("the Runs list filters and searches in the URL, pages by a cursor, and adds a new Run live", async ({ page, db }, info) => {
  await signIn(page, "octo-writer");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs" }).click();
  await page.waitForURL(/\/runs$/);
  await expect(page.getByTestId("run-row").first()).toBeVisible();

  // a filter is a GET form: its values land in the URL, and the page reads them back
  await page.getByLabel("Repository").selectOption(REPO);
  await page.getByLabel("State").selectOption("Failed");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL((url) => url.searchParams.get("state") === "Failed" && url.searchParams.get("repo") === REPO);
  await expect(page.getByLabel("State")).toHaveValue("Failed");
  const failed = page.getByTestId("run-row");
  await expect(failed.first()).toBeVisible();
  expect(await failed.evaluateAll((rows) => rows.every((r) => r.getAttribute("data-state") === "Failed"))).toBe(true);

  await page.goto(`/runs?q=${encodeURIComponent("zebra")}`);
  await expect(page.getByTestId("run-row")).toHaveCount(1);
  await expect(page.getByTestId("run-row")).toContainText("Runs list: the zebra search");
  await page.goto("/runs?q=%231207");
  await expect(page.locator(`[data-testid="run-row"][data-run="${runs[1207]}"]`)).toBeVisible();
  await page.goto(`/runs?q=${runs[1233]!.slice(0, 12)}`);
  await expect(page.getByTestId("run-row")).toHaveCount(1);

  // 55 Runs of this repository: a first page of 50, then the rest after the cursor, none twice
  await page.goto(`/runs?repo=${REPO}`);
  const first = await page.getByTestId("run-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run")));
  expect(first.length).toBe(50);
  await page.getByTestId("runs-next").click();
  await page.waitForURL(/cursor=/);
  expect(new URL(page.url()).searchParams.get("repo")).toBe(REPO);
  const second = await page.getByTestId("run-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run")));
  expect(second.length).toBeGreaterThanOrEqual(5);
  expect(second.filter((id) => first.includes(id))).toEqual([]);
  await page.getByTestId("runs-first").click();
  await page.waitForURL((url) => !url.searchParams.has("cursor"));

  // live: a Run that opens now appears at the top without a reload
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-status", "live");
  await seedItem(db, REPO, 1299, { title: "Runs list: opened while you looked" });
  const fresh = await seedRun(db, REPO, 1299, "Running");
  await db.query(`SELECT pg_notify('atelier_run_changed', $1)`, [fresh]);
  await expect(page.getByTestId("run-row").first()).toHaveAttribute("data-run", fresh);
  await page.screenshot({ path: info.outputPath("runs.png"), fullPage: true });
});

test("bad filters are a 400 with a stable token from the API and a plain sentence on the page, never a 500", async ({ page }) => {
  await signIn(page, "octo-reader");
  const answers = await page.evaluate(async () => {
    const out: { status: number; error: string }[] = [];
    for (const q of ["state=Exploded", "repo=not-a-repo", "limit=0", "cursor=nope", "color=red", `q=${"x".repeat(300)}`]) {
      const res = await fetch(`/api/v1/runs?${q}`);
      out.push({ status: res.status, error: (await res.json()).error });
    }
    return out;
  });
  expect(answers).toEqual([
    { status: 400, error: "invalid_query" },
    { status: 400, error: "invalid_query" },
    { status: 400, error: "invalid_query" },
    { status: 400, error: "invalid_cursor" },
    { status: 400, error: "invalid_query" },
    { status: 400, error: "invalid_query" },
  ]);
  const ok = await page.evaluate(async (repo) => (await fetch(`/api/v1/runs?repo=${repo}&state=Failed&limit=3`)).json(), REPO);
  expect(ok.runs).toHaveLength(3);
  expect(typeof ok.next).toBe("string");

  const res = await page.goto("/runs?state=Exploded");
  expect(res?.status()).toBe(200);
  await expect(page.getByTestId("problem")).toContainText("invalid_query");
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
});

test("a wrong Run id and an unknown address answer 404 inside the dashboard's navigation", async ({ page }) => {
  await signIn(page, "octo-writer");
  for (const path of ["/runs/0000000000000000000000000000dead", "/runs/not-a-run", "/no-such-page"]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page.getByTestId("not-found")).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Board" })).toBeVisible();
    await expect(page.getByTestId("viewer-login")).toHaveText("octo-writer");
  }
  // a real one still answers 200
  const res = await page.goto(`/runs/${runs[1201]}`);
  expect(res?.status()).toBe(200);
});

test("relative times tick without a reload", async ({ page }) => {
  await page.clock.install();
  await signIn(page, "octo-writer");
  await page.goto(`/runs?q=%231201`);
  const when = page.getByTestId("run-row").first().locator("time[data-relative-time]");
  await expect(when).toHaveText(/just now|\d+ s ago|1 min ago/);
  await page.clock.fastForward("10:00");
  await expect(when).toHaveText(/^1\d min ago$/);
});

test("check config now reads .github/atelier.yml at once: a broken Loop stays listed with its error, then clears", async ({ page }) => {
  const API = "demo-org/api";
  await signIn(page, "octo-admin");
  await page.goto("/loops");
  const section = page.locator(`[data-testid="loops-repo"][data-repo="${API}"]`);
  const loop = section.locator('[data-testid="loop"][data-loop="start-dev"]');
  await expect(async () => {
    await page.reload();
    await expect(loop.getByTestId("loop-state")).toHaveText("active", { timeout: 1_000 });
  }).toPass({ timeout: 90_000 });

  // the push's webhook is lost: only the button reads the file now
  await sim("dropNextWebhook", { count: 1 });
  await sim("pushCommit", { repo: API, branch: "main", files: { ".github/atelier.yml": "loops:\n  start-dev: [unclosed\n" }, message: "Break the config", login: "octo-admin" });
  await section.getByTestId("check-config").click();
  await expect(loop.getByTestId("loop-state")).toHaveText("error");
  await expect(loop.getByTestId("loop-error")).toContainText("The YAML does not parse");

  await sim("dropNextWebhook", { count: 1 });
  await sim("pushCommit", { repo: API, branch: "main", files: { ".github/atelier.yml": DEMO_CONFIG }, message: "Fix the config", login: "octo-admin" });
  await section.getByTestId("check-config").click();
  await expect(loop.getByTestId("loop-state")).toHaveText("active");
  await expect(loop.getByTestId("loop-error")).toHaveCount(0);
});

test("a reader sees the Loops and when their config was read, but no check config now", async ({ page }) => {
  await signIn(page, "octo-reader");
  await page.goto("/loops");
  const section = page.locator('[data-testid="loops-repo"][data-repo="demo-org/api"]');
  await expect(section.getByTestId("config-read-at")).toContainText("read");
  await expect(section.locator('[data-testid="loop"][data-loop="start-dev"]')).toBeVisible();
  await expect(section.getByTestId("check-config")).toHaveCount(0);
});
