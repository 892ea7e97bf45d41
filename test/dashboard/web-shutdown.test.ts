import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken } from "../../lib/auth/api-tokens";
import { upsertUser } from "../../lib/store/people/users";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { startWebServer, webServerEnv, type WebServer } from "../support/web-server";

/**
 * The real web process (next start) told to stop while a dashboard is open: Next.js's shutdown
 * waits for every open response, and a live view's server-sent events never end by themselves,
 * so the process stayed up until it was killed (a rollout's grace period, every time). Now the
 * streams end on SIGTERM and the process exits.
 */

let database: PrivateDb;
let web: WebServer;
let token: string;

beforeAll(async () => {
  database = await createPrivateDb("web_shutdown");
  const user = await upsertUser(database.db, { githubId: "7101", login: "stays-open", name: null, avatarUrl: null });
  token = (await createApiToken(database.db, user, { name: "live views", scope: "read", expiresInDays: 1 })).token;
  web = await startWebServer(webServerEnv("web-shutdown", { DATABASE_URL: database.url }));
}, 300_000);

afterAll(async () => {
  await web?.stop();
  await database?.drop();
});

/** Opens a live stream and resolves with its reader once its first bytes arrived. */
async function openStream(path: string): Promise<ReadableStreamDefaultReader<Uint8Array>> {
  const res = await fetch(`${web.url}${path}`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain("retry:");
  return reader;
}

/** Reads a stream to its end; resolves once the server closed it. */
async function drained(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  for (;;) {
    try {
      if ((await reader.read()).done) return;
    } catch {
      return; // the connection was cut: ended too
    }
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

describe("the web process on SIGTERM with live views open", () => {
  it("ends their streams and exits", async () => {
    const changes = await openStream("/api/v1/changes");
    const pids = web.pids();
    // a minute is no margin: without the fix the process waits for the stream forever
    const stopped = await Promise.race([web.stop().then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 60_000))]);
    if (!stopped) for (const pid of pids) kill(pid);
    expect(stopped, "the web process was still running a minute after SIGTERM").toBe(true);
    await drained(changes);
    expect(web.output()).not.toMatch(/Unhandled|uncaughtException/);
  }, 120_000);
});
