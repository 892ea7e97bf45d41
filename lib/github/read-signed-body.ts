import { createHmac } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertDeclaredLength, tooLarge, WEBHOOK_BODY_LIMIT, type BodyLimit } from "../http/read-body";
import { digestMatches } from "./receive-webhook";

/** How much of a delivery is held in memory before its signature is known; the rest waits on disk. */
export const IN_MEMORY_BYTES = 1024 * 1024;

/**
 * GitHub always says how long a delivery is; a body that does not (chunked) is taken only up to
 * what is held in memory: past it the server would keep paying for bytes nobody vouched for.
 */
export const UNDECLARED_LENGTH_LIMIT: BodyLimit = {
  limit: IN_MEMORY_BYTES,
  token: "webhook_too_large",
  what: "A webhook delivery without a Content-Length (GitHub always sends one)",
};

export type SignedBody = { signed: true; body: string } | { signed: false };

interface Spool {
  dir: string;
  fd: number | null;
}

async function openSpool(held: Uint8Array[]): Promise<Spool> {
  const dir = await mkdtemp(join(tmpdir(), "atelier-webhook-"));
  const spool = { dir, fd: openSync(join(dir, "body"), "wx", 0o600) };
  for (const chunk of held) writeSync(spool.fd, chunk);
  return spool;
}

const closeSpool = (spool: Spool): void => {
  if (spool.fd !== null) closeSync(spool.fd);
  spool.fd = null;
};

/**
 * Reads a webhook delivery's body while its HMAC is computed, so that a forged delivery costs
 * little whatever its size: at most 25 MB is taken (a declared length over it is refused
 * unread), 1 MiB when no length is declared (abandoned past it; both 413 `webhook_too_large`),
 * at most 1 MiB of it is held in memory — past that the bytes wait in a private temporary file — and only a body
 * whose signature matches is handed back whole. The file is written synchronously (a chunk
 * into the page cache at a time): Next.js hands a route the body with no backpressure, so a
 * reader slower than the network would let the stream queue what it does not hold.
 */
export async function readSignedBody(
  stream: ReadableStream<Uint8Array> | null,
  contentLength: string | null | undefined,
  secret: string,
  signature: string,
): Promise<SignedBody> {
  assertDeclaredLength(contentLength, WEBHOOK_BODY_LIMIT);
  const limit = contentLength ? WEBHOOK_BODY_LIMIT : UNDECLARED_LENGTH_LIMIT;
  const hmac = createHmac("sha256", secret);
  const held: Uint8Array[] = [];
  let size = 0;
  let spool: Spool | null = null;
  const reader = stream?.getReader();
  try {
    for (;;) {
      const next = reader ? await reader.read() : { done: true as const, value: undefined };
      if (next.done) break;
      const chunk = next.value;
      size += chunk.byteLength;
      if (size > limit.limit) {
        held.length = 0;
        await reader!.cancel().catch(() => undefined);
        throw tooLarge(limit);
      }
      hmac.update(chunk);
      if (spool) writeSync(spool.fd!, chunk);
      else if (size <= IN_MEMORY_BYTES) held.push(chunk);
      else {
        spool = await openSpool([...held, chunk]);
        held.length = 0;
      }
    }
    if (!secret || !digestMatches(hmac.digest(), signature)) return { signed: false };
    if (!spool) return { signed: true, body: Buffer.concat(held, size).toString("utf8") };
    closeSpool(spool);
    return { signed: true, body: await readFile(join(spool.dir, "body"), "utf8") };
  } finally {
    reader?.releaseLock();
    if (spool) {
      closeSpool(spool);
      await rm(spool.dir, { recursive: true, force: true });
    }
  }
}
