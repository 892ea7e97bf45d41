import type { TokenOf } from "../error-tokens";
import { PayloadTooLargeError } from "../errors";

/**
 * Reads a request body as text, never more than `limit` bytes of it: a Content-Length over the
 * limit is refused before a byte is read, and a body without one (chunked) is counted while it
 * streams in and abandoned (the stream cancelled) as soon as it passes the limit.
 */
export interface BodyLimit {
  /** At most this many bytes. */
  limit: number;
  /** The refusal's token, e.g. `webhook_too_large`. */
  token: TokenOf<413>;
  /** What is being refused, for the sentence: "A webhook delivery", "An API request body". */
  what: string;
}

export function tooLarge(limit: BodyLimit, size?: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    limit.token,
    `${limit.what} may be at most ${limit.limit} bytes${size !== undefined ? ` (this one is ${size})` : ""}; it was not read.`,
    { limit_bytes: limit.limit },
  );
}

/** Throws 413 when a declared Content-Length is over the limit; a body that declares none is counted while read. */
export function assertDeclaredLength(contentLength: string | null | undefined, limit: BodyLimit): void {
  if (contentLength == null || contentLength === "") return;
  const size = Number(contentLength);
  if (Number.isFinite(size) && size > limit.limit) throw tooLarge(limit, size);
}

export async function readBodyLimited(
  body: ReadableStream<Uint8Array> | null,
  contentLength: string | null | undefined,
  limit: BodyLimit,
): Promise<string> {
  assertDeclaredLength(contentLength, limit);
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit.limit) {
        chunks.length = 0;
        await reader.cancel().catch(() => undefined);
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

/** GitHub sends webhook payloads of at most 25 MB; Atelier reads no more. */
export const WEBHOOK_BODY_LIMIT: BodyLimit = { limit: 25 * 1024 * 1024, token: "webhook_too_large", what: "A webhook delivery" };

/** The JSON API's bodies are small (a message, a few limits): 64 KiB is plenty. */
export const API_BODY_LIMIT: BodyLimit = { limit: 64 * 1024, token: "body_too_large", what: "An API request body" };
