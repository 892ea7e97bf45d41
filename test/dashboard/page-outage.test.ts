import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrivateCluster, type PrivateCluster } from "../support/private-cluster";
import { startWebServer, webServerEnv, type WebServer } from "../support/web-server";

// Every refusal speaks, even of outages (THREATS.md, attack 19): with Postgres down every page
// answered `500 internal`. The real web process (next start) on a Postgres cluster of this
// file's own, stopped under it for 20 s and started again: its pages answer 503
// `database_unavailable` with Retry-After, then work again with nothing restarted. The probes
// answer for themselves meanwhile: /healthz 200 (the process lives: a liveness probe that
// failed with Postgres would have the web restarted through the outage), /readyz its 503
// with the checks. With the web's database dropped, pages answered 500 (Postgres's "no such
// database" was no outage to the gate) and so did /healthz.

let cluster: PrivateCluster;
let web: WebServer;
const PAGES = ["/board", "/signin", "/setup", "/needs-you"];

beforeAll(async () => {
  cluster = await startPrivateCluster();
  web = await startWebServer(webServerEnv("page-outage", { DATABASE_URL: cluster.url }));
}, 300_000);

afterAll(async () => {
  await web?.stop();
  cluster?.destroy();
});

const get = (path: string) => fetch(`${web.url}${path}`, { redirect: "manual" });

/** The probes while Postgres is away: alive, not ready, in their own format. */
async function expectProbesAnswer(): Promise<void> {
  const health = await get("/healthz");
  expect(health.status, await health.clone().text()).toBe(200);
  const ready = await get("/readyz");
  expect(ready.status).toBe(503);
  expect(((await ready.json()) as { checks: { postgres: { ok: boolean } } }).checks.postgres.ok).toBe(false);
}

/** Every page: 503 database_unavailable with Retry-After, under the security headers. */
async function expectPagesUnavailable(): Promise<void> {
  for (const path of PAGES) {
    const res = await get(path);
    const text = await res.text();
    expect(res.status, `${path}: ${text.slice(0, 200)}`).toBe(503);
    expect(text).toContain("database_unavailable");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  }
}

describe("the dashboard's pages with Postgres stopped", () => {
  it("answer 503 database_unavailable with Retry-After for 20 s of outage, then recover by themselves", async () => {
    for (const path of PAGES) expect((await get(path)).status, path).toBeLessThan(500);

    cluster.stop();
    const until = Date.now() + 20_000;
    let rounds = 0;
    while (Date.now() < until || rounds < 2) {
      await expectPagesUnavailable();
      await expectProbesAnswer();
      rounds++;
      await new Promise((r) => setTimeout(r, 2_000));
    }

    cluster.start();
    for (const path of PAGES) {
      await expect.poll(async () => (await get(path)).status, { timeout: 60_000, interval: 1_000 }).toBeLessThan(500);
    }
    expect(web.output()).not.toMatch(/Unhandled|uncaughtException/);
  }, 240_000);

  it("answer 503 database_unavailable, not 500, once their database was dropped; /healthz still 200", async () => {
    const admin = new pg.Client({ connectionString: cluster.url.replace(/\/atelier$/, "/postgres") });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE atelier WITH (FORCE)`);
    } finally {
      await admin.end();
    }
    await expectPagesUnavailable();
    await expectProbesAnswer();
    expect(web.output()).not.toMatch(/Unhandled|uncaughtException/);
  }, 120_000);
});
