import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { encodeCursor } from "../../lib/dashboard/runs-list";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { startWebServer, webServerEnv, type WebServer } from "../support/web-server";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedItem, seedRepo, seedRun, seedUser, uniqueInstallationId } from "./support/seed";

// Bad input never answers 500: each request here but the first reached Postgres or a throwing
// parser unchecked and made the real web process (next start) answer 500. Each is now refused
// at the edge: a Run id that cannot exist is the page's 404, a bad filter the page's own
// problem with its token, a bad body or cookie a 400 with a token. (The Run page's id goes
// through runIdParam now; Next.js hands the page `%00` still encoded, so it was a 404 before too.)

const ENV = webServerEnv("bad-input-pages");
const tag = randomBytes(3).toString("hex");
const REPO = `badinput-${tag}/app`;
const github = new FakeGitHub();
const user = { id: Math.floor(Math.random() * 1e9), login: `writer-${tag}`, token: `tok-w-${tag}` };
let db: Db;
let web: WebServer;
let cookie = "";

beforeAll(async () => {
  db = testDb(2);
  await github.start();
  const installation = uniqueInstallationId();
  github.installations.set(installation, `badinput-${tag}`);
  github.repos.push({ fullName: REPO, installationId: installation, roles: { [user.login]: "admin" } });
  github.users.push(user);
  await seedRepo(db, REPO, installation);
  await seedItem(db, REPO, 1);
  await seedRun(db, { repo: REPO, number: 1, state: "Waiting" });
  cookie = cookieFor(await seedUser(db, user, ENV.AUTH_SECRET!));
  web = await startWebServer({ ...ENV, GITHUB_API_URL: github.url });
}, 300_000);

afterAll(async () => {
  await web?.stop();
  await github.stop();
  await db?.close();
});

async function get(path: string, headers: Record<string, string> = { cookie }) {
  const res = await fetch(`${web.url}${path}`, { headers, redirect: "manual" });
  return { status: res.status, text: await res.text() };
}

async function post(path: string, body: string, contentType: string) {
  const res = await fetch(`${web.url}${path}`, { method: "POST", headers: { cookie, origin: web.url, "content-type": contentType }, body, redirect: "manual" });
  return { status: res.status, text: await res.text() };
}

/** A cursor of the Runs list's own encoding, of a day that does not exist. */
const impossibleCursor = encodeCursor("2026-02-30T10:00:00.000000Z", "0".repeat(32));

it("answers a Run id with a NUL the page's 404", async () => {
  const res = await get("/runs/%00");
  expect(res.status, res.text.slice(0, 300)).toBe(404);
});

it("reads an audit `before` past a bigint as no cursor: the first page", async () => {
  const res = await get(`/audit?before=${"9".repeat(20)}`);
  expect(res.status, res.text.slice(0, 300)).toBe(200);
});

it("refuses a Runs cursor of an impossible date with invalid_cursor, on the page and from the API", async () => {
  const page = await get(`/runs?cursor=${impossibleCursor}`);
  expect(page.status, page.text.slice(0, 300)).toBe(200);
  expect(page.text).toContain("invalid_cursor");
  const api = await get(`/api/v1/runs?cursor=${impossibleCursor}`);
  expect([api.status, JSON.parse(api.text).error]).toEqual([400, "invalid_cursor"]);
});

it("refuses a Runs search with a NUL as invalid_query, and shows the Board unfiltered for a Loop with one", async () => {
  const runs = await get("/runs?q=%00");
  expect(runs.status, runs.text.slice(0, 300)).toBe(200);
  expect(runs.text).toContain("invalid_query");
  const board = await get("/board?loop=%00");
  expect(board.status, board.text.slice(0, 300)).toBe(200);
});

it("refuses a Board move to an Item number past Postgres's int with invalid_body", async () => {
  const res = await post("/api/v1/board/move", JSON.stringify({ repo: REPO, number: 2 ** 31, lane: "Backlog" }), "application/json");
  expect([res.status, JSON.parse(res.text).error], res.text.slice(0, 300)).toEqual([400, "invalid_body"]);
});

it.each(["application/json", "text/plain"])("refuses a setup form sent as %s with invalid_form", async (type) => {
  const res = await post("/api/setup/start", JSON.stringify({ github: "github.com" }), type);
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(res.text).toContain("invalid_form");
});

it("refuses a setup callback whose state cookie is not percent-encoding with setup_state_mismatch", async () => {
  const res = await get("/api/setup/callback?code=c&state=s", { cookie: "atelier_setup=%E0%A4%A" });
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(res.text).toContain("setup_state_mismatch");
});

it.each(["/runs/%E0%A4%A", "/api/v1/runs/%E0%A4%A"])("refuses a path whose percent-encoding is broken (%s) with invalid_path", async (path) => {
  const res = await get(path);
  expect([res.status, JSON.parse(res.text).error], res.text.slice(0, 300)).toEqual([400, "invalid_path"]);
});
