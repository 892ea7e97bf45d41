import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis } from "../../lib/config/redis";
import { startHealthServer, type HealthServer } from "../../lib/health/health-server";
import { createDb, type Db } from "../../lib/store/kernel/db";
import { markWorkerStopped, registerWorker } from "../../lib/store/runs/worker-registry";
import { startPrivateCluster, type PrivateCluster } from "../support/private-cluster";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis";

// Readiness on a Postgres cluster and a Redis server of this file's own, which the test stops
// under the web route and the worker's health port and starts again: 503 with the failing
// check named while one is away, 200 again once it is back, nothing restarted.

let cluster: PrivateCluster;
let redis: PrivateRedis;
let db: Db;
let workerPort: HealthServer;
let workerRedis: ReturnType<typeof createRedis>;
let readyz: { GET: () => Promise<Response> };
let healthz: { GET: () => Response };
let webDb: Db | undefined;
let metricsRoute: { GET: (request: Request) => Promise<Response> };

beforeAll(async () => {
  [cluster, redis] = await Promise.all([startPrivateCluster(), startPrivateRedis()]);
  process.env.DATABASE_URL = cluster.url;
  process.env.REDIS_URL = redis.url;
  db = createDb(cluster.url, 2);
  workerRedis = createRedis(redis.url, { failFast: true });
  workerRedis.on("error", () => undefined);
  workerPort = await startHealthServer({ port: 0, host: "127.0.0.1", version: "test", readiness: { db, redis: workerRedis, timeoutMs: 3_000 } });
  readyz = await import("../../app/readyz/route");
  healthz = await import("../../app/healthz/route");
  metricsRoute = await import("../../app/metrics/route");
  webDb = (await import("../../app/_server/db")).db();
}, 120_000);

afterAll(async () => {
  await workerPort?.close();
  workerRedis?.disconnect();
  await webDb?.close();
  await db?.close();
  await redis?.stop();
  cluster?.destroy();
});

type Answer = { status: number; body: { status: string; checks: Record<string, { ok: boolean; error?: string; live?: number }> } };

const web = async (): Promise<Answer> => {
  const res = await readyz.GET();
  return { status: res.status, body: (await res.json()) as Answer["body"] };
};
const worker = async (): Promise<Answer> => {
  const res = await fetch(`http://127.0.0.1:${workerPort.port}/readyz`);
  return { status: res.status, body: (await res.json()) as Answer["body"] };
};
const statusOf = async (probe: () => Promise<Answer>) => (await probe()).status;

describe("GET /readyz", () => {
  it("is 503 on the web while no worker is alive, 200 once one heartbeats; the worker's port does not ask for one", async () => {
    expect((await healthz.GET()).status).toBe(200);
    const none = await web();
    expect(none.status).toBe(503);
    expect(none.body).toMatchObject({ status: "not_ready", checks: { postgres: { ok: true }, redis: { ok: true }, workers: { ok: false, live: 0 } } });
    expect(await worker()).toMatchObject({ status: 200, body: { status: "ready" } });

    await registerWorker(db, { id: "ready-w1", host: "h", pid: 1, version: "test", slots: 2 });
    expect(await web()).toMatchObject({ status: 200, body: { status: "ready", checks: { workers: { ok: true, live: 1 } } } });
    const h = await fetch(`http://127.0.0.1:${workerPort.port}/healthz`);
    expect(h.status).toBe(200);
    expect(await h.json()).toMatchObject({ status: "alive", version: "test" });
    expect((await fetch(`http://127.0.0.1:${workerPort.port}/anything`)).status).toBe(404);
  });

  it("turns 503 naming Postgres when it stops, and 200 when it is back", async () => {
    cluster.stop();
    for (const probe of [web, worker]) {
      const down = await probe();
      expect(down.status).toBe(503);
      expect(down.body.status).toBe("not_ready");
      expect(down.body.checks.postgres!.ok).toBe(false);
      expect(down.body.checks.postgres!.error).toBeTruthy();
      expect(JSON.stringify(down.body)).not.toContain(cluster.url);
      expect(down.body.checks.redis!.ok).toBe(true);
    }
    cluster.start();
    await expect.poll(() => statusOf(web), { timeout: 60_000, interval: 500 }).toBe(200);
    await expect.poll(() => statusOf(worker), { timeout: 60_000, interval: 500 }).toBe(200);
  }, 180_000);

  it("turns 503 naming Redis when it stops, and 200 when it is back", async () => {
    await redis.stop();
    for (const probe of [web, worker]) {
      const down = await probe();
      expect(down.status).toBe(503);
      expect(down.body.checks.redis!.ok).toBe(false);
      expect(down.body.checks.postgres!.ok).toBe(true);
    }
    await redis.start();
    await expect.poll(() => statusOf(web), { timeout: 60_000, interval: 500 }).toBe(200);
    await expect.poll(() => statusOf(worker), { timeout: 60_000, interval: 500 }).toBe(200);
  }, 180_000);

  it("serves /metrics on both, behind ATELIER_METRICS_TOKEN when it is set (401 metrics_unauthorized otherwise)", async () => {
    process.env.ATELIER_METRICS_TOKEN = "readiness-metrics-token";
    try {
      const webScrape = (authorization?: string) =>
        metricsRoute.GET(new Request("http://localhost/metrics", { headers: authorization ? { authorization } : {} }));
      const workerScrape = (authorization?: string) => fetch(`http://127.0.0.1:${workerPort.port}/metrics`, { headers: authorization ? { authorization } : {} });
      for (const scrape of [webScrape, workerScrape]) {
        const refused = await scrape();
        expect(refused.status).toBe(401);
        expect(await refused.json()).toMatchObject({ error: "metrics_unauthorized" });
        expect((await scrape("Bearer wrong")).status).toBe(401);
        const ok = await scrape("Bearer readiness-metrics-token");
        expect(ok.status).toBe(200);
        expect(ok.headers.get("content-type")).toContain("text/plain");
        expect(await ok.text()).toMatch(/^# TYPE atelier_run_transitions_total counter$/m);
      }
      // the web reads the scrape-time gauges from its database
      expect(await (await webScrape("Bearer readiness-metrics-token")).text()).toMatch(/^atelier_queue_depth 0$/m);
    } finally {
      delete process.env.ATELIER_METRICS_TOKEN;
    }
  });

  it("by default /metrics is closed on both and the health port listens on loopback only (attack 33)", async () => {
    const webScrape = () => metricsRoute.GET(new Request("http://localhost/metrics"));
    const workerScrape = () => fetch(`http://127.0.0.1:${workerPort.port}/metrics`);
    for (const scrape of [webScrape, workerScrape]) {
      const refused = await scrape();
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: "metrics_unauthorized" });
    }
    process.env.ATELIER_METRICS_OPEN = "true"; // the operator's choice, on a private network
    try {
      for (const scrape of [webScrape, workerScrape]) expect((await scrape()).status).toBe(200);
    } finally {
      delete process.env.ATELIER_METRICS_OPEN;
    }

    const unset = await startHealthServer({ port: 0, version: "test", readiness: { db, redis: workerRedis, timeoutMs: 3_000 } });
    try {
      expect(unset.host).toBe("127.0.0.1");
      expect((await fetch(`http://127.0.0.1:${unset.port}/healthz`)).status).toBe(200);
      const outside = Object.values(networkInterfaces()).flat().filter((i) => i && !i.internal && i.family === "IPv4").map((i) => i!.address);
      for (const address of outside) await expect(fetch(`http://${address}:${unset.port}/healthz`)).rejects.toThrow();
    } finally {
      await unset.close();
    }
  });

  it("counts a worker that stopped as not alive", async () => {
    await markWorkerStopped(db, "ready-w1");
    expect(await web()).toMatchObject({ status: 503, body: { checks: { workers: { ok: false, live: 0 } } } });
  });
});
