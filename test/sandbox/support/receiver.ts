import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  event: string;
  action: string;
  delivery: string;
}

/** A webhook endpoint for tests: records every POST and answers `status` (200 by default). */
export async function startReceiver(listenOn = 0): Promise<{ url: string; received: Received[]; status: number; close(): Promise<void> }> {
  const received: Received[] = [];
  const state = { status: 200 };
  const server = createServer((req, res) => {
    if (req.method !== "POST") {
      // GitHub's hooks only POST; anything else is someone asking whether this listens
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const parsed = JSON.parse(body) as { action?: string };
      received.push({
        headers: req.headers,
        body,
        event: String(req.headers["x-github-event"]),
        action: parsed.action ?? "",
        delivery: String(req.headers["x-github-delivery"]),
      });
      res.writeHead(state.status);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(listenOn, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    get status() {
      return state.status;
    },
    set status(value: number) {
      state.status = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
