import { createHmac } from "node:crypto";
import { mkdtemp, open, readFile, rm, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertDeclaredLength, tooLarge, WEBHOOK_BODY_LIMIT } from "../http/read-body";
import { digestMatches } from "./receive-webhook";

/** How much of a delivery is held in memory before its signature is known; the rest waits on disk. */
export const IN_MEMORY_BYTES = 1024 * 1024;

export type SignedBody = { signed: true; body: string } | { signed: false };

interface Spool {
  dir: string;
  file: FileHandle;
}

async function openSpool(held: Uint8Array[]): Promise<Spool> {
  const dir = await mkdtemp(join(tmpdir(), "atelier-webhook-"));
  const file = await open(join(dir, "body"), "wx", 0o600);
  for (const chunk of held) await file.write(chunk);
  return { dir, file };
}

/**
 * Reads a webhook delivery's body while its HMAC is computed, so that a forged delivery costs
 * little whatever its size: at most 25 MB is taken (a declared length over it is refused
 * unread, a stream without one is abandoned past it, 413 `webhook_too_large`), at most 1 MiB of
 * it is held in memory — past that the bytes wait in a private temporary file — and only a body
 * whose signature matches is handed back whole.
 */
export async function readSignedBody(
  stream: ReadableStream<Uint8Array> | null,
  contentLength: string | null | undefined,
  secret: string,
  signature: string,
): Promise<SignedBody> {
  assertDeclaredLength(contentLength, WEBHOOK_BODY_LIMIT);
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
      if (size > WEBHOOK_BODY_LIMIT.limit) {
        held.length = 0;
        await reader!.cancel().catch(() => undefined);
        throw tooLarge(WEBHOOK_BODY_LIMIT);
      }
      hmac.update(chunk);
      if (spool) await spool.file.write(chunk);
      else if (size <= IN_MEMORY_BYTES) held.push(chunk);
      else {
        spool = await openSpool([...held, chunk]);
        held.length = 0;
      }
    }
    if (!secret || !digestMatches(hmac.digest(), signature)) return { signed: false };
    if (!spool) return { signed: true, body: Buffer.concat(held, size).toString("utf8") };
    await spool.file.close();
    return { signed: true, body: await readFile(join(spool.dir, "body"), "utf8") };
  } finally {
    reader?.releaseLock();
    if (spool) {
      await spool.file.close().catch(() => undefined);
      await rm(spool.dir, { recursive: true, force: true });
    }
  }
}
