import { sign } from "@octokit/webhooks-methods";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../lib/sandbox";
import { startWebServer, webServerEnv, type WebServer } from "../support/web-server";
import { sendBody } from "./support/send-body";

// Limits before work (THREATS.md, attack 18): a 60 MB webhook with a bad signature was read
// whole before its 401. The real web process (next start), its receiver built as it starts,
// is sent 60 MB with no Content-Length (chunked) and a well-formed but wrong signature; the
// resident memory of that process — not of this test — is sampled while it answers.

const MB = 1024 * 1024;
let sim: Simulator;
let web: WebServer;
let dir = "";

beforeAll(async () => {
  sim = await startSimulator({});
  dir = await mkdtemp(join(tmpdir(), "atelier-webhook-memory-"));
  const file = join(dir, "sandbox-app.json");
  await writeFile(file, JSON.stringify({ baseUrl: sim.url, ...sim.app }));
  web = await startWebServer(webServerEnv("webhook-memory", { ATELIER_SANDBOX_APP_FILE: file }));
}, 300_000);

afterAll(async () => {
  await web?.stop();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `total` bytes chunked (no Content-Length) with a signature, to the real server's receiver. */
const sendChunked = (total: number, signature: string) =>
  sendBody(`${web.url}/api/github/webhooks`, total, {
    "content-type": "application/json",
    "transfer-encoding": "chunked",
    "x-github-event": "issues",
    "x-github-delivery": randomUUID(),
    "x-hub-signature-256": signature,
  });

describe("a 60 MB webhook with a bad signature and no Content-Length, to the real web process", () => {
  it("is answered 413 or 401 while the server grows by < 20 MB; the receiver was built at start", async () => {
    // built as the process started, before any delivery
    expect(web.output()).toContain("the webhook receiver is ready");
    // the route's code is loaded by its first request: load it with a small forged delivery
    const warm = await sendChunked(1024, `sha256=${"0".repeat(64)}`);
    expect(warm.status).toBe(401);

    const before = web.rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, web.rss())), 20);
    let answer: Awaited<ReturnType<typeof sendChunked>>;
    try {
      answer = await sendChunked(60 * MB, `sha256=${"ab".repeat(32)}`);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, web.rss());
    expect([413, 401], answer.body).toContain(answer.status);
    expect(JSON.parse(answer.body).error).toMatch(/^webhook_(too_large|signature_invalid)$/);
    // (Next's server drains what the client keeps sending after the answer, unread)
    console.info(`webhook-memory: ${answer.status} ${JSON.parse(answer.body).error}; the server grew by ${((peak - before) / MB).toFixed(1)} MB`);
    expect(peak - before, `grew from ${before} to ${peak}`).toBeLessThan(20 * MB);

    // and a signed delivery is still taken
    const body = JSON.stringify({ zen: "Design for failure.", hook_id: 1 });
    const ping = await fetch(`${web.url}/api/github/webhooks`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", "x-github-event": "ping", "x-github-delivery": randomUUID(), "x-hub-signature-256": await sign(sim.app.webhookSecret, body) },
    });
    expect(ping.status).toBe(200);
  }, 180_000);
});
