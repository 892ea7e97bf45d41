import { request as httpRequest } from "node:http";

const CHUNK = 256 * 1024;

/**
 * POSTs `total` bytes of spaces to `url` over real HTTP, made as the socket drains (so the
 * sender never holds them), and stops at the answer. A server that refuses a body in
 * mid-flight closes the connection: the client may see the reset before it reads the answer
 * (status 0 then), a race of TCP itself.
 */
export function sendBody(url: string, total: number, headers: Record<string, string>): Promise<{ status: number; sent: number; body: string }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let done = false;
    const req = httpRequest(url, { method: "POST", headers });
    req.on("response", (res) => {
      done = true;
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, sent, body }));
      res.on("error", () => resolve({ status: res.statusCode ?? 0, sent, body }));
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (done) return;
      if (err.code === "ECONNRESET" || err.code === "EPIPE") resolve({ status: 0, sent, body: "" });
      else reject(err);
    });
    const pump = () => {
      while (!done && sent < total) {
        const chunk = Buffer.alloc(Math.min(CHUNK, total - sent), 0x20);
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!done) req.end();
    };
    pump();
  });
}
