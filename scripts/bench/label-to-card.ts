// From a label put on an issue in the GitHub simulator (its control API, as a person on GitHub)
// to the live Board's DOM showing the card in that label's lane, in real Chromium: the whole
// path — the simulator's webhook, the dashboard's receiver, the Hint queue, the worker reading
// the Item and storing it, the Item-change notification, the change stream, the page's refresh.
// The stack is the browser tests' own (e2e/global-setup.ts's helpers) on a database of its own:
// the simulator, `next start` and the worker. Prints label_to_card_p50_ms and _p99_ms (goal:
// p99 ≤ 2000 ms).
import type { ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { chromium } from "playwright-core";
import { buildDashboardIfNeeded, freshDatabase, LOGS, stackEnv, start, startDashboard, startSimulator, stopChildren } from "../../e2e/global-setup";
import playwrightConfig from "../../playwright.config";
import { freePort } from "../../test/support/free-port";
import { bench, percentile } from "./measure";

const ROOT = resolve(import.meta.dirname, "..", "..");
const REPO = "demo-org/webapp";
const WARMUP = 2;
const SAMPLES = 24;
const SAMPLE_TIMEOUT_MS = 30_000;

export async function labelToCardBench(url: string): Promise<void> {
  mkdirSync(LOGS, { recursive: true });
  const databaseUrl = new URL(url);
  databaseUrl.pathname = `${databaseUrl.pathname}_label_to_card`;
  await freshDatabase(databaseUrl.toString());
  const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379/12";
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  await redis.flushdb();
  await redis.quit();

  const [webPort, simPort] = [await freePort(), await freePort()];
  const appFile = join(LOGS, "bench-sandbox-app.json");
  rmSync(appFile, { force: true });
  const env = stackEnv({ databaseUrl: databaseUrl.toString(), redisUrl, webPort, appFile, config: join(ROOT, "e2e", "atelier.e2e.yml") });
  const children: ChildProcess[] = [];
  const browser = await chromium.launch(playwrightConfig.use?.launchOptions);
  try {
    const simUrl = await startSimulator("bench-simulator", simPort, appFile, webPort, env, children);
    buildDashboardIfNeeded(env);
    const baseUrl = await startDashboard("bench-next", webPort, env, children);
    children.push(start("bench-worker", ["tsx", "jobs/worker.ts"], env).child);

    const control = async (method: string, input: Record<string, unknown>) => {
      const res = await fetch(`${simUrl}/_sim/control/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
      if (!res.ok) throw new Error(`sim ${method}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { number: number };
    };
    const page = await browser.newPage();
    // sign in as the simulator's default user, then the Board of the demo repository, live
    await page.goto(`${baseUrl}/signin`);
    await page.getByTestId("signin-github").click();
    await page.waitForURL(/\/board/);
    await page.goto(`${baseUrl}/board?repo=${REPO}`);
    await page.waitForSelector('[data-testid="live-status"][data-status="live"]');
    const card = (lane: string, n: number) => `[data-testid="lane"][data-lane="${lane}"] [data-item="${REPO}#${n}"]`;
    // the worker registers the sandbox's repositories as it starts: the first issue waits for it
    const first = await control("createIssue", { repo: REPO, title: "Bench: the first card" });
    await page.waitForSelector(card("Backlog", first.number), { timeout: 180_000 });

    const ms: number[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const issue = await control("createIssue", { repo: REPO, title: `Bench: label to card ${i}` });
      await page.waitForSelector(card("Backlog", issue.number), { timeout: SAMPLE_TIMEOUT_MS });
      const t0 = performance.now();
      await control("addLabels", { repo: REPO, number: issue.number, labels: ["ready-for-agent"] });
      await page.waitForSelector(card("Ready for agent", issue.number), { timeout: SAMPLE_TIMEOUT_MS });
      if (i >= WARMUP) ms.push(performance.now() - t0);
    }
    console.log(`# label_to_card: ${ms.length} labels, each from the simulator's control API to the live Board's DOM in Chromium`);
    bench("label_to_card_p50_ms", percentile(ms, 50), "ms");
    bench("label_to_card_p99_ms", percentile(ms, 99), "ms");
  } finally {
    await browser.close();
    await stopChildren(children);
  }
}
