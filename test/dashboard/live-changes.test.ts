import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { viewerFromCookieHeader } from "../../lib/auth/current-viewer";
import { MAX_STREAMS_PER_PERSON, streamChanges } from "../../lib/dashboard/live-changes";
import { lastStepLine } from "../../lib/dashboard/transcript-steps";
import { deleteSession } from "../../lib/store/people/session-rows";
import { encodeStep } from "../../lib/executor/adapters/step-entry";
import type { Db } from "../../lib/store/kernel/db";
import { projectionFromRest } from "../../lib/loops/projection";
import { announceRunsChanged } from "../../lib/store/runs/run-changed";
import { observation, storeObservations } from "../../lib/triggers/observe-item";
import { testDb } from "../support/db";
import { ORIGIN } from "./support/api-client";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedRepo, seedRun, seedUser, uniqueInstallationId } from "./support/seed";
import { forgetAccess } from "../../lib/auth/authorize";
import { itemKey } from "../../lib/engine/ids";
import { concernsViewer } from "../../lib/dashboard/live-changes";
import type { Viewer } from "../../lib/auth/viewer";

// The live views' stream, called as Next.js calls the route: a signed-in viewer hears
// `changed` soon after a Run or an Item changes, and nothing that names it; a signed-out one is 401.
process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
process.env.AUTH_SECRET = "live-changes-test-secret-0123456789abcdef";

const route = await import("../../app/api/v1/changes/route");
const tag = randomBytes(3).toString("hex");
// the viewer reads REPO on GitHub; OTHER is another tenant's, registered on the same instance
const REPO = `live-${tag}/app`;
const OTHER = `other-${tag}/secret`;
const github = new FakeGitHub();
const user = { id: 900_000_000 + Math.floor(Math.random() * 1e8), login: `live-${tag}`, token: `tok-${tag}` };
let db: Db;
let cookie: string;

beforeAll(async () => {
  db = testDb(2);
  await github.start();
  process.env.GITHUB_API_URL = github.url;
  const mine = uniqueInstallationId();
  const theirs = uniqueInstallationId();
  github.users.push(user);
  github.repos.push({ fullName: REPO, installationId: mine, roles: { [user.login]: "read" } }, { fullName: OTHER, installationId: theirs, roles: {} });
  await seedRepo(db, REPO, mine);
  await seedRepo(db, OTHER, theirs);
  forgetAccess();
  cookie = cookieFor(await seedUser(db, user, process.env.AUTH_SECRET!));
});
afterAll(async () => {
  await github.stop();
  await db.close();
});

function open(withCookie: string | null, signal?: AbortSignal): Promise<Response> {
  const headers = new Headers({ host: new URL(ORIGIN).host });
  if (withCookie) headers.set("cookie", withCookie);
  return route.GET(new Request(new URL("/api/v1/changes", ORIGIN), { headers, signal }), { params: Promise.resolve({}) });
}

it("a signed-out request is refused with its token", async () => {
  const res = await open(null);
  expect(res.status).toBe(401);
  expect(await res.json()).toMatchObject({ error: "signed_out" });
});

/** The stream's text until its first `changed` event, `poke` called every 500 ms meanwhile (the LISTEN connection may still be opening). */
async function untilChanged(poke: () => void): Promise<string> {
  const abort = new AbortController();
  const res = await open(cookie, abort.signal);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 20_000;
  const poker = setInterval(poke, 500);
  try {
    while (!text.includes("event: changed") && Date.now() < deadline) {
      const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 1_000))]);
      if (next && !next.done) text += decoder.decode(next.value);
    }
  } finally {
    clearInterval(poker);
    abort.abort();
    await reader.cancel().catch(() => undefined);
  }
  return text;
}

it("a signed-in viewer hears `changed` after a Run changes, and not which Run", async () => {
  const runId = await seedRun(db, { repo: REPO, number: 1, state: "Pending" });
  const text = await untilChanged(() => announceRunsChanged(db.pool, [runId]));
  expect(text).toContain("event: changed\ndata: {}\n\n");
  expect(text).not.toContain(runId);
});

it("a signed-in viewer hears `changed` after an Item changes with no Run (a label no Loop matches), and not which Item", async () => {
  const repo = REPO;
  let n = 0;
  const issue = () => ({
    number: 7,
    title: "Issue 7",
    state: "open",
    html_url: `https://github.com/${repo}/issues/7`,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: new Date().toISOString(),
    labels: [`label-${n++}`],
  });
  const text = await untilChanged(() => void storeObservations(db, [observation(repo, projectionFromRest(issue()), new Date())]));
  expect(text).toContain("event: changed\ndata: {}\n\n");
  expect(text).not.toContain(repo);
});

it("a running card's last step is one line, whatever the entry", () => {
  expect(lastStepLine(encodeStep({ type: "tool_call", id: "t1", name: "Bash", input: { command: "npm   test\n--watch" }, inputCutBytes: 0 }))).toBe("Bash: npm test --watch");
  expect(lastStepLine(encodeStep({ type: "text", text: "Reading the issue\nthen the code" }))).toBe("Reading the issue then the code");
  expect(lastStepLine(encodeStep({ type: "tool_result", id: "t1", name: "Edit", output: "", cutBytes: 0, isError: true, exitCode: 1 }))).toBe("Edit failed");
  expect(lastStepLine({ stream: "stdout", text: "x".repeat(300) })).toHaveLength(120);
});

/** Reads the stream until it ends (or 10 s pass), returning its text and whether it ended. */
async function readToEnd(body: ReadableStream<Uint8Array>): Promise<{ text: string; ended: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 500))]);
    if (next?.done) return { text, ended: true };
    if (next) text += decoder.decode(next.value);
  }
  await reader.cancel().catch(() => undefined);
  return { text, ended: false };
}

it("a person whose session ends hears `signed_out` and the stream ends (attack 33)", async () => {
  const session = await seedUser(db, { id: 910_000_000 + Math.floor(Math.random() * 1e7), login: `gone-${tag}`, token: `tok-g-${tag}` }, process.env.AUTH_SECRET!);
  const stillAllowed = async () => (await viewerFromCookieHeader(db, cookieFor(session))) !== null;
  expect(await stillAllowed()).toBe(true);
  const stream = streamChanges(db, { person: `gone-${tag}`, stillAllowed, reauthorizeMs: 200 });
  await deleteSession(db, session); // signed out elsewhere, or revoked
  const { text, ended } = await readToEnd(stream);
  expect(text).toContain("event: signed_out\ndata: {}\n\n");
  expect(ended).toBe(true);
});

it("one person holds at most MAX_STREAMS_PER_PERSON streams; closing one frees its place (attack 33)", async () => {
  const aborts = Array.from({ length: MAX_STREAMS_PER_PERSON }, () => new AbortController());
  const held = await Promise.all(aborts.map((a) => open(cookie, a.signal)));
  try {
    expect(held.map((r) => r.status)).toEqual(held.map(() => 200));
    const refused = await open(cookie);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: "too_many_streams" });
    aborts[0]!.abort();
    await held[0]!.body!.cancel().catch(() => undefined);
    const again = new AbortController();
    const reopened = await open(cookie, again.signal);
    expect(reopened.status).toBe(200);
    again.abort();
    await reopened.body!.cancel().catch(() => undefined);
  } finally {
    for (const a of aborts) a.abort();
    await Promise.all(held.map((r) => r.body?.cancel().catch(() => undefined)));
  }
});

it("another tenant's Run or Item moving tells a viewer nothing: only changes of repositories they see concern them (attack 33)", async () => {
  const viewer: Viewer = { id: String(user.id), login: user.login, name: null, avatarUrl: null, admin: false };
  const concerns = concernsViewer(db, viewer);
  const theirRun = await seedRun(db, { repo: OTHER, number: 1, state: "Pending" });
  const myRun = await seedRun(db, { repo: REPO, number: 2, state: "Pending" });
  expect(await concerns({ runs: [theirRun], items: [itemKey(OTHER, 3)] })).toBe(false);
  expect(await concerns({ runs: ["no-such-run"], items: ["not a key"] })).toBe(false);
  expect(await concerns({ runs: [theirRun, myRun], items: [] })).toBe(true);
  expect(await concerns({ runs: [], items: [itemKey(REPO, 3)] })).toBe(true);
});
