import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { createDb, type Db } from "../../lib/store/kernel/db";
import { startPrivateCluster, type PrivateCluster } from "../support/private-cluster";
import { call, type RouteHandler } from "./support/api-client";
import { cookieFor, seedUser } from "./support/seed";

// Every refusal speaks, even of outages (THREATS.md, attack 19): the API on a Postgres cluster
// of this file's own, which the test stops under it and starts again. While it is down the
// API answers 503 `database_unavailable` with a Retry-After; once it is back, the same request
// succeeds again with nothing restarted.

let cluster: PrivateCluster;
let seedDb: Db;
let cookie = "";
let me: { GET: RouteHandler<Record<string, never>> };
let board: { GET: RouteHandler<Record<string, never>> };
let webDb: Db | undefined;

beforeAll(async () => {
  cluster = await startPrivateCluster();
  process.env.DATABASE_URL = cluster.url;
  process.env.AUTH_SECRET = "dashboard-outage-test-secret-0123456789";
  setInstanceConfigForTests(defaultInstanceConfig());
  seedDb = createDb(cluster.url, 2);
  cookie = cookieFor(await seedUser(seedDb, { id: 4242, login: "outage-user", token: "tok-outage" }, process.env.AUTH_SECRET));
  await seedDb.close();
  me = await import("../../app/api/v1/me/route");
  board = await import("../../app/api/v1/board/route");
  webDb = (await import("../../app/_server/db")).db();
}, 120_000);

afterAll(async () => {
  setInstanceConfigForTests(undefined);
  await webDb?.close();
  cluster?.destroy();
});

const getMe = () => call(me.GET, "GET", "/api/v1/me", { cookie });

describe("Postgres unreachable", () => {
  it("answers 503 database_unavailable with Retry-After, then recovers by itself when Postgres is back", async () => {
    const up = await getMe();
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.login).toBe("outage-user");

    cluster.stop();
    // the pool's idle connection is cut (57P01), then new ones are refused (ECONNREFUSED): both are the outage
    for (let i = 0; i < 3; i++) {
      const down = await getMe();
      expect(down.status, JSON.stringify(down.body)).toBe(503);
      expect(down.body.error).toBe("database_unavailable");
      expect(Number(down.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const boardDown = await call(board.GET, "GET", "/api/v1/board", { cookie });
    expect(boardDown.status).toBe(503);
    expect(boardDown.body.error).toBe("database_unavailable");
    // a page's read says the same in its own words, instead of the error page
    const { load } = await import("../../app/_server/page-data");
    const page = await load(() => webDb!.pool.query("SELECT 1"));
    expect(page).toMatchObject({ ok: false, status: 503, token: "database_unavailable" });

    cluster.start();
    // no restart of anything: the pool reconnects on the next request
    await expect.poll(async () => (await getMe()).status, { timeout: 60_000, interval: 500 }).toBe(200);
  }, 180_000);
});
