import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real webhook receiver on 127.0.0.1 for the tests: it answers with the statuses it is told
 * (in turn; the last one repeats) and checks every request's signature itself, the way a
 * user's receiver would — not with Atelier's own helper.
 */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
  signatureValid: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

export function signatureIsValid(header: string | undefined, secret: string, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!m) return false;
  const expected = createHmac("sha256", secret).update(`${m[1]}.${body}`).digest();
  const fresh = Math.abs(Date.now() / 1000 - Number(m[1])) < 300;
  return fresh && timingSafeEqual(expected, Buffer.from(m[2]!, "hex"));
}

export async function startReceiver(secret: () => string, statuses: number[]): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const status = statuses[Math.min(received.length, statuses.length - 1)]!;
      received.push({ headers: req.headers, body, status, signatureValid: signatureIsValid(req.headers["x-atelier-signature"] as string, secret(), body) });
      res.writeHead(status, { "content-type": "text/plain" }).end(status >= 400 ? "receiver is down" : "ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/atelier`,
    port,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
