import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { startPrivateRedis, type PrivateRedis } from "../support/private-redis";
import { call, type RouteHandler } from "./support/api-client";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedItem, seedRepo, seedRun, seedUser, uniqueInstallationId } from "./support/seed";

// Redis unreachable (THREATS.md, attack 19): approving a Run enqueues its job; with the Redis of
// this file stopped, the API answers 503 `queue_unavailable` with a Retry-After — not a hang,
// not a 500 — and once Redis is started again on the same port, an approval goes through.

const tag = randomBytes(3).toString("hex");
const REPO = `qout-${tag}/app`;
const github = new FakeGitHub();
const admin = { id: Math.floor(Math.random() * 1e9), login: `admin-${tag}`, token: `tok-a-${tag}` };
let db: Db;
let cookie = "";
let redis: PrivateRedis;
let approve: { POST: RouteHandler<{ id: string }> };
let close: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  redis = await startPrivateRedis();
  process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
  process.env.REDIS_URL = redis.url;
  process.env.AUTH_SECRET = "queue-outage-test-secret-0123456789";
  db = testDb(2);
  await github.start();
  process.env.GITHUB_API_URL = github.url;
  const installation = uniqueInstallationId();
  github.installations.set(installation, `qout-${tag}`);
  github.repos.push({ fullName: REPO, installationId: installation, roles: { [admin.login]: "admin" } });
  github.users.push(admin);
  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [admin.login] });
  forgetAccess();
  await seedRepo(db, REPO, installation);
  cookie = cookieFor(await seedUser(db, admin, process.env.AUTH_SECRET));
  const services = await import("../../app/_server/services");
  const live = services.createLiveServices(db, { bullPrefix: `test-qout-${tag}`, keyPrefix: `test-qout-${tag}:` });
  services.setDashboardServicesForTests(live.services);
  close = async () => {
    services.setDashboardServicesForTests(undefined);
    await live.close().catch(() => undefined);
  };
  approve = await import("../../app/api/v1/runs/[id]/approve/route");
}, 60_000);

afterAll(async () => {
  await close();
  await redis.stop();
  setInstanceConfigForTests(undefined);
  await github.stop();
  await db.close();
});

let n = 0;
async function waitingRun(): Promise<string> {
  const number = ++n;
  await seedItem(db, REPO, number);
  return seedRun(db, { repo: REPO, number, state: "Waiting" });
}
const post = (id: string) => call(approve.POST, "POST", `/api/v1/runs/${id}/approve`, { params: { id }, cookie });

describe("Redis unreachable", () => {
  it("answers 503 queue_unavailable with Retry-After, then approves again once Redis is back", async () => {
    const first = await post(await waitingRun());
    expect(first.status, JSON.stringify(first.body)).toBe(200);

    await redis.stop();
    const down = await post(await waitingRun());
    expect(down.status, JSON.stringify(down.body)).toBe(503);
    expect(down.body.error).toBe("queue_unavailable");
    expect(Number(down.headers.get("retry-after"))).toBeGreaterThan(0);

    await redis.start();
    const id = await waitingRun();
    await expect.poll(async () => (await post(id)).status, { timeout: 60_000, interval: 500 }).toBe(200);
  }, 180_000);
});
