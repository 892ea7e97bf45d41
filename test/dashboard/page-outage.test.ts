import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrivateCluster, type PrivateCluster } from "../support/private-cluster";
import { startWebServer, type WebServer } from "../support/web-server";

// Every refusal speaks, even of outages (THREATS.md, attack 19): with Postgres down every page
// answered `500 internal`. The real web process (next start) on a Postgres cluster of this
// file's own, stopped under it for 20 s and started again: its pages answer 503
// `database_unavailable` with Retry-After, then work again with nothing restarted.

let cluster: PrivateCluster;
let web: WebServer;
const PAGES = ["/board", "/signin", "/setup", "/needs-you"];

beforeAll(async () => {
  cluster = await startPrivateCluster();
  web = await startWebServer({
    ...process.env,
    DATABASE_URL: cluster.url,
    AUTH_SECRET: "page-outage-test-secret-0123456789",
    ATELIER_SECRET_KEY: "page-outage-test-key-0123456789",
    ATELIER_SANDBOX_APP_FILE: "",
    GITHUB_APP_ID: "",
  });
}, 300_000);

afterAll(async () => {
  await web?.stop();
  cluster?.destroy();
});

const get = (path: string) => fetch(`${web.url}${path}`, { redirect: "manual" });

describe("the dashboard's pages with Postgres stopped", () => {
  it("answer 503 database_unavailable with Retry-After for 20 s of outage, then recover by themselves", async () => {
    for (const path of PAGES) expect((await get(path)).status, path).toBeLessThan(500);

    cluster.stop();
    const until = Date.now() + 20_000;
    let rounds = 0;
    while (Date.now() < until || rounds < 2) {
      for (const path of PAGES) {
        const res = await get(path);
        const text = await res.text();
        expect(res.status, `${path}: ${text.slice(0, 200)}`).toBe(503);
        expect(text).toContain("database_unavailable");
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      }
      rounds++;
      await new Promise((r) => setTimeout(r, 2_000));
    }

    cluster.start();
    for (const path of PAGES) {
      await expect.poll(async () => (await get(path)).status, { timeout: 60_000, interval: 1_000 }).toBeLessThan(500);
    }
    expect(web.output()).not.toMatch(/Unhandled|uncaughtException/);
  }, 240_000);
});
