import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { forgetAccess } from "../../lib/auth/authorize";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { viewerFromCookieHeader } from "../../lib/auth/current-viewer";
import { authorizeTranscript } from "../../lib/dashboard/queries";
import { streamTranscript, TRANSCRIPT_CHANNEL } from "../../lib/dashboard/transcript";
import type { Db } from "../../lib/store/kernel/db";
import { testDb } from "../support/db";
import { ORIGIN } from "./support/api-client";
import { FakeGitHub } from "./support/fake-github";
import { cookieFor, seedItem, seedRepo, seedRun, seedUser, uniqueInstallationId } from "./support/seed";

process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
process.env.AUTH_SECRET = "dashboard-transcript-test-secret-01234";

const { GET } = await import("../../app/api/v1/runs/[id]/transcript/route");

const tag = randomBytes(3).toString("hex");
const REPO = `sse-${tag}/app`;
const github = new FakeGitHub();
const reader = { id: 0, login: `sse-reader-${tag}`, token: `sse-tok-${tag}` };
let db: Db;
let cookie = "";

beforeAll(async () => {
  db = testDb(4);
  await github.start();
  process.env.GITHUB_API_URL = github.url;
  const installation = uniqueInstallationId();
  reader.id = Math.floor(Math.random() * 1e9);
  github.users.push(reader, { id: reader.id + 1, login: `sse-nobody-${tag}`, token: `sse-nobody-${tag}` });
  github.repos.push({ fullName: REPO, installationId: installation, roles: { [reader.login]: "read" } });
  setInstanceConfigForTests({ ...defaultInstanceConfig() });
  forgetAccess();
  await seedRepo(db, REPO, installation);
  cookie = cookieFor(await seedUser(db, reader, process.env.AUTH_SECRET!));
});

afterAll(async () => {
  setInstanceConfigForTests(undefined);
  await github.stop();
  await db.close();
});

interface Sse {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/** Reads server-sent events until `until` says stop (or the stream ends). */
async function readEvents(res: Response, until: (events: Sse[]) => boolean, onEvent?: (e: Sse) => Promise<void>): Promise<Sse[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: Sse[] = [];
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const e: Partial<Sse> = {};
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) e.event = line.slice(7);
        else if (line.startsWith("id: ")) e.id = line.slice(4);
        else if (line.startsWith("data: ")) e.data = JSON.parse(line.slice(6));
      }
      if (!e.event) continue;
      events.push(e as Sse);
      await onEvent?.(e as Sse);
      if (until(events)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

async function entry(runId: string, text: string, notify = true) {
  await db.pool.query(`INSERT INTO transcript_entries (attempt_id, run_id, stream, text) VALUES ($1, $2, 'stdout', $3)`, [`${runId}/agent/1`, runId, text]);
  if (notify) await db.pool.query(`SELECT pg_notify($1, $2)`, [TRANSCRIPT_CHANNEL, runId]);
}

function open(runId: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return GET(new Request(`${ORIGIN}/api/v1/runs/${runId}/transcript`, { headers: { cookie, ...headers }, signal }), { params: Promise.resolve({ id: runId }) });
}

it("streams a finished Run's transcript, its state and pull request, then ends", async () => {
  await seedItem(db, REPO, 1);
  const runId = await seedRun(db, { repo: REPO, number: 1, state: "Succeeded", attempts: [{ state: "Succeeded" }], pullRequestNumber: 7 });
  await entry(runId, "hello");
  await entry(runId, "world");
  const res = await open(runId);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const events = await readEvents(res, (es) => es.some((e) => e.event === "end"));
  expect(events.filter((e) => e.event === "entry").map((e) => e.data.text)).toEqual(["hello", "world"]);
  expect(events.find((e) => e.event === "run")?.data).toMatchObject({ state: "Succeeded", pullRequestNumber: 7 });
  expect(events.at(-1)).toMatchObject({ event: "end", data: { state: "Succeeded" } });
});

it("follows a live Run: new rows arrive as they are written, and the end when it succeeds", async () => {
  await seedItem(db, REPO, 2);
  const runId = await seedRun(db, { repo: REPO, number: 2, state: "Running", attempts: [{ state: "Running" }] });
  await entry(runId, "first");
  const res = await open(runId);
  const t0 = Date.now();
  const events = await readEvents(
    res,
    (es) => es.some((e) => e.event === "end"),
    async (e) => {
      if (e.event === "entry" && e.data.text === "first") await entry(runId, "second");
      if (e.event === "entry" && e.data.text === "second") {
        await entry(runId, "third", false); // a writer that does not notify is still followed
        setTimeout(() => void db.pool.query(`UPDATE runs SET state = 'Succeeded', pull_request_number = 9 WHERE id = $1`, [runId]), 300);
      }
    },
  );
  expect(events.filter((e) => e.event === "entry").map((e) => e.data.text)).toEqual(["first", "second", "third"]);
  expect(events.filter((e) => e.event === "run").map((e) => e.data.state)).toEqual(["Running", "Succeeded"]);
  expect(Date.now() - t0).toBeLessThan(5_000);
});

it("resumes after Last-Event-ID", async () => {
  await seedItem(db, REPO, 3);
  const runId = await seedRun(db, { repo: REPO, number: 3, state: "Failed", attempts: [{ state: "Failed", failureKind: "AgentFailure" }] });
  await entry(runId, "a");
  await entry(runId, "b");
  const all = await readEvents(await open(runId), (es) => es.some((e) => e.event === "end"));
  const firstId = all.find((e) => e.event === "entry")!.id!;
  const rest = await readEvents(await open(runId, { "last-event-id": firstId }), (es) => es.some((e) => e.event === "end"));
  expect(rest.filter((e) => e.event === "entry").map((e) => e.data.text)).toEqual(["b"]);
});

it("401 signed out; 404 without read access, the same as for no such Run", async () => {
  await seedItem(db, REPO, 4);
  const runId = await seedRun(db, { repo: REPO, number: 4, state: "Queued" });
  const anon = await GET(new Request(`${ORIGIN}/api/v1/runs/${runId}/transcript`), { params: Promise.resolve({ id: runId }) });
  expect(anon.status).toBe(401);
  const nobody = await seedUser(db, { id: reader.id + 1, login: `sse-nobody-${tag}`, token: `sse-nobody-${tag}` }, process.env.AUTH_SECRET!);
  const denied = await GET(new Request(`${ORIGIN}/api/v1/runs/${runId}/transcript`, { headers: { cookie: cookieFor(nobody) } }), {
    params: Promise.resolve({ id: runId }),
  });
  expect(denied.status).toBe(404);
  expect((await denied.json()).error).toBe("run_not_found");
  expect((await open("missing")).status).toBe(404);
});

it("a live stream asks again whether its reader may read the Run, and ends when GitHub took the access away", async () => {
  await seedItem(db, REPO, 5);
  const runId = await seedRun(db, { repo: REPO, number: 5, state: "Running", attempts: [{ state: "Running" }] });
  await entry(runId, "before");
  const viewer = (await viewerFromCookieHeader(db, cookie))!;
  const ctx = { db };
  const stream = streamTranscript(db, runId, { reauthorize: () => authorizeTranscript(ctx, viewer, runId), reauthorizeEveryMs: 0 });
  const events = await readEvents(
    new Response(stream),
    (es) => es.some((e) => e.event === "failure"),
    async (e) => {
      if (e.event !== "entry") return;
      delete github.repos.find((r) => r.fullName === REPO)!.roles[reader.login]; // revoked on GitHub
      forgetAccess(viewer.id); // as the 30 s cache would, long before the stream's next check
      await entry(runId, "after");
    },
  );
  expect(events.filter((e) => e.event === "entry").map((e) => e.data.text)).toEqual(["before"]);
  expect(events.at(-1)).toMatchObject({ event: "failure", data: { error: "run_not_found" } });
  github.repos.find((r) => r.fullName === REPO)!.roles[reader.login] = "read";
  forgetAccess(viewer.id);
});

/** Entries with ids across a power of ten (9999992 … 10000008), where text order is not number order. */
async function entriesAcrossADecade(runId: string, n: number): Promise<string[]> {
  const base = 10_000_000 - Math.floor(n / 2);
  await db.pool.query(`DELETE FROM transcript_entries WHERE id BETWEEN $1 AND $2`, [base, base + n - 1]);
  const texts = Array.from({ length: n }, (_, i) => `line ${i + 1}`);
  await db.pool.query(
    `INSERT INTO transcript_entries (id, attempt_id, run_id, stream, text)
     SELECT $1::bigint + i - 1, $2, $3, 'stdout', 'line ' || i FROM generate_series(1, $4::int) AS i`,
    [base, `${runId}/agent/1`, runId, n],
  );
  return texts;
}

const page = async (runId: string, q: string) => {
  const res = await GET(new Request(`${ORIGIN}/api/v1/runs/${runId}/transcript?${q}`, { headers: { cookie } }), { params: Promise.resolve({ id: runId }) });
  return { status: res.status, body: (await res.json()) as { entries: { id: string; text: string }[]; next: string | null; error?: string } };
};

it("a transcript of 17 entries shows 17, in order, as a page and as the live stream: ids are ordered as numbers", async () => {
  await seedItem(db, REPO, 40);
  const runId = await seedRun(db, { repo: REPO, number: 40, state: "Succeeded", attempts: [{ state: "Succeeded" }] });
  const texts = await entriesAcrossADecade(runId, 17);
  const { status, body } = await page(runId, "limit=50");
  expect(status).toBe(200);
  expect(body.entries.map((e) => e.text)).toEqual(texts);
  expect(body.next).toBeNull();
  const ids = body.entries.map((e) => Number(e.id));
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  expect(ids.some((id) => id >= 10_000_000) && ids.some((id) => id < 10_000_000)).toBe(true);
  const json = await GET(new Request(`${ORIGIN}/api/v1/runs/${runId}/transcript`, { headers: { cookie, accept: "application/json" } }), {
    params: Promise.resolve({ id: runId }),
  });
  expect(((await json.json()) as { entries: unknown[] }).entries).toHaveLength(17);

  const events = await readEvents(await open(runId), (es) => es.some((e) => e.event === "end"));
  expect(events.filter((e) => e.event === "entry").map((e) => e.data.text)).toEqual(texts);
});

it("250 entries over pages: after, limit and the next cursor, each entry once, in order", async () => {
  await seedItem(db, REPO, 41);
  const runId = await seedRun(db, { repo: REPO, number: 41, state: "Succeeded", attempts: [{ state: "Succeeded" }] });
  const texts = await entriesAcrossADecade(runId, 250);
  const seen: string[] = [];
  const sizes: number[] = [];
  let after: string | null = "0";
  while (after !== null) {
    const { status, body } = await page(runId, `after=${after}&limit=100`);
    expect(status).toBe(200);
    seen.push(...body.entries.map((e) => e.text));
    sizes.push(body.entries.length);
    after = body.next;
  }
  expect(sizes).toEqual([100, 100, 50]);
  expect(seen).toEqual(texts);
  // the default page is 200
  expect((await page(runId, "after=0&limit=200")).body.next).not.toBeNull();
  const bad = await page(runId, "limit=0");
  expect(bad.status).toBe(400);
  expect(bad.body.error).toBe("invalid_query");
});
