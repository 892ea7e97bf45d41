import { sign } from "@octokit/webhooks-methods";
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeWebhookHandler } from "../../lib/github/node-webhook-handler";
import type { Simulator } from "../../lib/sandbox/index";
import { webhookRouteUnderTest } from "./support/route-under-test";
import { sendBody } from "./support/send-body";
import { getDb } from "../../lib/store/kernel/db";

// Limits before work (THREATS.md, attack 18): the Next route handler itself, configured as in
// webhook-route.test.ts, fed a 60 MB body that the test generates as it is pulled, so that the
// test knows how much of it the route read, and how much the process grew meanwhile.
let sim: Simulator;
let POST: (request: Request) => Promise<Response>;

beforeAll(async () => {
  ({ sim, POST } = await webhookRouteUnderTest());
  // the receiver is built by the first delivery: build it now, so it is not counted below
  const body = JSON.stringify({ zen: "warm up" });
  await POST(webhook(body, { "x-hub-signature-256": await sign(sim.app.webhookSecret, body) }));
});
afterAll(async () => {
  await sim.close();
  await getDb().close();
});

const MB = 1024 * 1024;
const CHUNK = 256 * 1024;

/** A body of `total` bytes made chunk by chunk as it is pulled (each chunk new memory). */
function generated(total: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled >= total) return controller.close();
      const chunk = new Uint8Array(Math.min(CHUNK, total - seen.pulled)).fill(0x20);
      seen.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

function webhook(body: BodyInit, headers: Record<string, string>): Request {
  return new Request("http://localhost/api/github/webhooks", {
    method: "POST",
    body,
    headers: { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": randomUUID(), ...headers },
    duplex: "half",
  } as RequestInit);
}

const BAD_SIGNATURE = `sha256=${"0".repeat(64)}`;

describe("a webhook over GitHub's 25 MB", () => {
  it("is refused 413 from its Content-Length before a byte is read: a 60 MB delivery with a bad signature grows the process by < 20 MB", async () => {
    const { stream, seen } = generated(60 * MB);
    const before = process.memoryUsage().rss;
    const res = await POST(webhook(stream, { "content-length": String(60 * MB), "x-hub-signature-256": BAD_SIGNATURE }));
    const grown = process.memoryUsage().rss - before;
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: "webhook_too_large" });
    expect(seen.pulled).toBeLessThanOrEqual(2 * CHUNK); // a stream may pull ahead once or twice
    expect(grown).toBeLessThan(20 * MB);
  });

  it("without a Content-Length (GitHub always sends one), is counted while it streams and abandoned past 1 MiB (413), never read whole", async () => {
    const { stream, seen } = generated(60 * MB);
    const before = process.memoryUsage().rss;
    const res = await POST(webhook(stream, { "x-hub-signature-256": BAD_SIGNATURE }));
    const grown = process.memoryUsage().rss - before;
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: "webhook_too_large" });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(1 * MB + 3 * CHUNK);
    expect(grown).toBeLessThan(20 * MB);
  });

  it("with no signature at all, is refused 401 unread, whatever its size", async () => {
    const { stream, seen } = generated(60 * MB);
    const res = await POST(webhook(stream, {}));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "webhook_signature_invalid" });
    expect(seen.pulled).toBeLessThanOrEqual(2 * CHUNK);
  });

  it("a delivery under the limit with a bad signature is still 401, and a signed one is taken", async () => {
    const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 2 });
    const forged = await POST(webhook(body, { "x-github-event": "ping", "x-hub-signature-256": BAD_SIGNATURE }));
    expect(forged.status).toBe(401);
    const ok = await POST(webhook(body, { "x-github-event": "ping", "x-hub-signature-256": await sign(sim.app.webhookSecret, body) }));
    expect(ok.status).toBe(200);
  });

  it("an empty body, signed, is 400 webhook_body_invalid (not a signature mismatch)", async () => {
    const res = await POST(webhook("", { "x-github-event": "issues", "x-hub-signature-256": await sign(sim.app.webhookSecret, "").catch(() => hmacOfEmpty()) }));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "webhook_body_invalid" });
  });
});

async function hmacOfEmpty(): Promise<string> {
  const { createHmac } = await import("node:crypto");
  return `sha256=${createHmac("sha256", sim.app.webhookSecret).update("").digest("hex")}`;
}

describe("the plain Node receiver (nodeWebhookHandler), over real HTTP", () => {
  let server: Server;
  let url = "";
  let handled = 0;
  beforeAll(async () => {
    server = createServer(
      nodeWebhookHandler(async () => {
        handled++;
        return { status: 200, headers: {}, body: { status: "accepted", id: "x" } };
      }),
    );
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  const send = (total: number, headers: Record<string, string>) =>
    sendBody(url, total, { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": randomUUID(), ...headers });

  it("a declared 60 MB is refused 413 unread; the process grows by < 20 MB", async () => {
    const before = process.memoryUsage().rss;
    const res = await send(60 * MB, { "content-length": String(60 * MB), "x-hub-signature-256": BAD_SIGNATURE });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: "webhook_too_large" });
    expect(res.sent).toBeLessThan(60 * MB);
    expect(process.memoryUsage().rss - before).toBeLessThan(20 * MB);
    expect(handled).toBe(0);
  });

  it("a chunked 60 MB is cut off with a 413, never handed on", async () => {
    const res = await send(60 * MB, { "transfer-encoding": "chunked", "x-hub-signature-256": BAD_SIGNATURE });
    expect([413, 0]).toContain(res.status);
    expect(res.sent).toBeLessThan(60 * MB);
    expect(handled).toBe(0);
  });

  it("an unsigned delivery is refused 401 unread", async () => {
    const res = await send(1 * MB, {});
    expect(res.status).toBe(401);
    expect(handled).toBe(0);
  });
});
