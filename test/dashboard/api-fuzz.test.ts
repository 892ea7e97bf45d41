import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { createRedis } from "../../lib/config/redis";
import { defaultInstanceConfig } from "../../lib/config/roster";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { ORIGIN } from "./support/api-client";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedItem, seedRepo, seedRun, seedUser, uniqueInstallationId } from "./support/seed";

// Bad ids and odd bodies (THREATS.md, attack 19): every /api/v1 route, every method it has, sent
// malformed path ids, queries and bodies as a signed-in instance admin (who passes every
// permission check, so the malformed part is what reaches the store), anonymously and
// cross-origin. No answer is a 5xx, every 4xx carries a token, and the target Run is unchanged.

process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
process.env.AUTH_SECRET = "dashboard-api-fuzz-secret-0123456789";
process.env.GITHUB_WEB_URL = "http://github.test";

type Handler = (request: Request, route: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Module = Partial<Record<"GET" | "POST" | "PUT" | "PATCH" | "DELETE", unknown>>;

const { createLiveServices, setDashboardServicesForTests } = await import("../../app/_server/services");
/** path template → module; `:x` are the route's params. */
const ROUTES: [string, Module][] = [
  ["/api/v1/audit", await import("../../app/api/v1/audit/route")],
  ["/api/v1/board", await import("../../app/api/v1/board/route")],
  ["/api/v1/board/move", await import("../../app/api/v1/board/move/route")],
  ["/api/v1/budgets", await import("../../app/api/v1/budgets/route")],
  ["/api/v1/budgets/reset", await import("../../app/api/v1/budgets/reset/route")],
  ["/api/v1/installations", await import("../../app/api/v1/installations/route")],
  ["/api/v1/loops", await import("../../app/api/v1/loops/route")],
  ["/api/v1/loops/pause", await import("../../app/api/v1/loops/pause/route")],
  ["/api/v1/me", await import("../../app/api/v1/me/route")],
  ["/api/v1/needs-you", await import("../../app/api/v1/needs-you/route")],
  ["/api/v1/outbound/deliveries", await import("../../app/api/v1/outbound/deliveries/route")],
  ["/api/v1/outbound/deliveries/:id/redeliver", await import("../../app/api/v1/outbound/deliveries/[id]/redeliver/route")],
  ["/api/v1/outbound/hooks", await import("../../app/api/v1/outbound/hooks/route")],
  ["/api/v1/outbound/hooks/:id", await import("../../app/api/v1/outbound/hooks/[id]/route")],
  ["/api/v1/quotas/installations/:id", await import("../../app/api/v1/quotas/installations/[id]/route")],
  ["/api/v1/quotas/repositories/:owner/:name", await import("../../app/api/v1/quotas/repositories/[owner]/[name]/route")],
  ["/api/v1/runs/:id", await import("../../app/api/v1/runs/[id]/route")],
  ["/api/v1/runs/:id/approve", await import("../../app/api/v1/runs/[id]/approve/route")],
  ["/api/v1/runs/:id/cancel", await import("../../app/api/v1/runs/[id]/cancel/route")],
  ["/api/v1/runs/:id/edit-and-retry", await import("../../app/api/v1/runs/[id]/edit-and-retry/route")],
  ["/api/v1/runs/:id/intervene", await import("../../app/api/v1/runs/[id]/intervene/route")],
  ["/api/v1/runs/:id/resolve-failure", await import("../../app/api/v1/runs/[id]/resolve-failure/route")],
  ["/api/v1/runs/:id/retry", await import("../../app/api/v1/runs/[id]/retry/route")],
  ["/api/v1/runs/:id/transcript", await import("../../app/api/v1/runs/[id]/transcript/route")],
  ["/api/v1/usage", await import("../../app/api/v1/usage/route")],
];

const BAD_IDS = [
  "\u0000",
  "a\u0000b",
  "%00",
  "x".repeat(5_000),
  "9".repeat(40),
  "-1",
  "0",
  "1.5",
  "1e3",
  "0x10",
  " ",
  "",
  "🚀",
  "\ud800",
  "../..",
  "%E0%A4%A",
  "'; DROP TABLE runs; --",
  "0".repeat(32),
  "A".repeat(32),
];
const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
// (an empty body reads as {}: for approve and the like it is the right body, not a malformed one)
const BAD_BODIES = [
  "{",
  "null",
  "[]",
  "0",
  '"\\u0000"',
  '{"\\u0000":1}',
  deep(20_000),
  `{"a":${deep(10_000)}}`,
  '{"text":"a\\u0000b","attemptId":"x\\u0000","prompt":"\\u0000","repo":"a/b\\u0000","loop":"\\u0000","lane":"\\u0000","itemKey":"\\u0000","url":"http://x/\\u0000","secret":"\\u0000","installation_id":1,"number":1,"paused":true}',
  '{"number":1e400,"installation_id":-1,"monthly_runs":"10","repo":"' + "a".repeat(60_000) + '"}',
  '{"repo":"a/b","number":99999999999999999999999,"lane":"x"}',
  '{"itemKey":"[\\"github\\",1]"}',
  '{"url":"http://[::1]:0/","installation_id":9007199254740993}',
  '{"__proto__":{"admin":true},"constructor":{"prototype":{}}}',
  "\ud800\udc00\u0000",
];
const BAD_QUERIES: Record<string, string>[] = [
  { repo: "\u0000" },
  { repo: "a/b\u0000" },
  { repo: "x".repeat(5_000) },
  { before: "9".repeat(40) },
  { after: "9".repeat(40) },
  { limit: "-1" },
  { limit: "1e400" },
  { perLane: "NaN" },
  { month: "2026-13" },
  { month: "\u0000" },
  { run: "\u0000" },
  { run: "x".repeat(5_000) },
  { hook: "99999999999999999999999" },
  { "\u0000": "x" },
  { unknown: "1" },
];

const tag = randomBytes(3).toString("hex");
const REPO = `fuzz-${tag}/app`;
const github = new FakeGitHub();
let db: Db;
const admin = { id: 0, login: `admin-${tag}`, token: `tok-a-${tag}` };
let adminCookie = "";
let runId = "";
let live: Awaited<ReturnType<typeof createLiveServices>>;

beforeAll(async () => {
  db = testDb(4);
  await github.start();
  process.env.GITHUB_API_URL = github.url;
  const installation = uniqueInstallationId();
  github.installations.set(installation, `fuzz-${tag}`);
  github.repos.push({ fullName: REPO, installationId: installation, roles: { [admin.login]: "admin" } });
  admin.id = Math.floor(Math.random() * 1e9);
  github.users.push(admin);
  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: [admin.login] });
  forgetAccess();
  await seedRepo(db, REPO, installation);
  await seedItem(db, REPO, 1);
  runId = await seedRun(db, { repo: REPO, number: 1, state: "Waiting" });
  adminCookie = cookieFor(await seedUser(db, admin, process.env.AUTH_SECRET!));
  live = createLiveServices(db, { bullPrefix: `test-apifuzz-${tag}`, keyPrefix: `test-apifuzz-${tag}:` });
  setDashboardServicesForTests({ ...live.services, async moveCard() {} });
});

afterAll(async () => {
  setDashboardServicesForTests(undefined);
  await live.close();
  const redis = createRedis();
  const keys = await redis.keys(`test-apifuzz-${tag}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
  setInstanceConfigForTests(undefined);
  await github.stop();
  await db.close();
});

interface Case {
  label: string;
  method: string;
  handler: Handler;
  params: Record<string, string>;
  query?: Record<string, string>;
  raw?: string;
}

/** The param values for a route: each one malformed in turn, the others well-formed. */
function paramSets(template: string): Record<string, string>[] {
  const names = [...template.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  if (!names.length) return [{}];
  const good = (n: string): string => (n === "id" ? (template.includes("/runs/") ? runId : "1") : n === "owner" ? `fuzz-${tag}` : "app");
  const sets: Record<string, string>[] = [Object.fromEntries(names.map((n) => [n, good(n)]))];
  for (const bad of names) for (const v of BAD_IDS) sets.push(Object.fromEntries(names.map((n) => [n, n === bad ? v : good(n)])));
  return sets;
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const [template, mod] of ROUTES) {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"] as const) {
      const handler = mod[method] as Handler | undefined;
      if (!handler) continue;
      const sets = paramSets(template);
      const write = method !== "GET";
      // malformed ids, with a body that is not the problem (none) — except the first, well-formed set
      for (const params of sets.slice(1)) out.push({ label: `${method} ${template} ${JSON.stringify(params).slice(0, 80)}`, method, handler, params });
      if (write) for (const raw of BAD_BODIES) out.push({ label: `${method} ${template} body ${JSON.stringify(raw.slice(0, 60))}`, method, handler, params: sets[0]!, raw });
      else for (const query of BAD_QUERIES) out.push({ label: `${method} ${template} ?${JSON.stringify(query).slice(0, 60)}`, method, handler, params: sets[0]!, query });
    }
  }
  return out;
}

async function send(c: Case, who: "admin" | "anonymous" | "cross-origin") {
  const url = new URL(`http://localhost:3999/fuzz`);
  for (const [k, v] of Object.entries(c.query ?? {})) url.searchParams.set(k, v);
  const headers = new Headers({ host: new URL(ORIGIN).host, "content-type": "application/json" });
  if (who !== "anonymous") headers.set("cookie", adminCookie);
  if (c.method !== "GET") headers.set("origin", who === "cross-origin" ? "http://evil.example" : ORIGIN);
  const controller = new AbortController();
  const res = await c.handler(new Request(url, { method: c.method, headers, body: c.raw, signal: controller.signal }), { params: Promise.resolve(c.params) });
  // a stream (the transcript of the real Run) is answered 200 and stopped here
  if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    controller.abort();
    await res.body?.cancel().catch(() => undefined);
    return { status: res.status, body: {} as Record<string, unknown> };
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  return { status: res.status, body };
}

describe("every /api/v1 route × malformed ids, queries and bodies × {admin, anonymous, cross-origin}", () => {
  it("answers no 5xx, gives every 4xx a token, and changes no Run", async () => {
    const before = await db.pool.query(`SELECT id, state::text, updated_at FROM runs WHERE repo = $1 ORDER BY id`, [REPO]);
    const all = cases();
    expect(all.length).toBeGreaterThan(400);
    const failures: string[] = [];
    let sent = 0;
    for (const c of all) {
      for (const who of ["admin", "anonymous", "cross-origin"] as const) {
        if (who === "cross-origin" && c.method === "GET") continue;
        const res = await send(c, who);
        sent++;
        if (res.status >= 500) failures.push(`${who} ${c.label}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
        else if (res.status >= 400 && (typeof res.body.error !== "string" || !/^[a-z_]+$/.test(res.body.error))) failures.push(`${who} ${c.label}: ${res.status} without a token`);
        if (who === "anonymous" && c.method !== "GET" && res.status !== 401 && res.status !== 413 && res.status !== 400 && res.status !== 404) {
          failures.push(`${who} ${c.label}: a write answered ${res.status}`);
        }
        if (who === "cross-origin" && res.status !== 403 && res.status !== 413) failures.push(`${who} ${c.label}: answered ${res.status}, not 403`);
      }
    }
    expect(failures.slice(0, 15)).toEqual([]);
    expect(sent).toBeGreaterThan(1_000);
    const after = await db.pool.query(`SELECT id, state::text, updated_at FROM runs WHERE repo = $1 ORDER BY id`, [REPO]);
    expect(after.rows).toEqual(before.rows);
  }, 300_000);
});
