import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * An agent's kept session at rest (ADR 0082): AES-256-GCM under a key derived from the instance
 * key (ATELIER_SECRET_KEY, the one that seals the App's credentials), with the Run's id as the
 * authenticated data. A blob opens only for the Run it was sealed for: one copied from another
 * Run (or repository), altered, or sealed under another key is refused, never restored.
 */
const PURPOSE = "atelier agent session v1";
const MAGIC = Buffer.from("ATS1");
const IV_BYTES = 12;
const TAG_BYTES = 16;

const keyOf = (secret: string): Buffer => Buffer.from(hkdfSync("sha256", secret, "atelier", PURPOSE, 32));
const boundTo = (runId: string): Buffer => Buffer.from(`run:${runId}`, "utf8");

export function sealSession(plain: Buffer, secret: string, runId: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyOf(secret), iv);
  cipher.setAAD(boundTo(runId));
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([MAGIC, iv, cipher.getAuthTag(), sealed]);
}

/** The session's bytes, or null when the blob was not sealed for this Run under this key, or was altered. */
export function openSession(blob: Buffer, secret: string, runId: string): Buffer | null {
  const head = MAGIC.length + IV_BYTES + TAG_BYTES;
  if (blob.length < head || !blob.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(secret), blob.subarray(MAGIC.length, MAGIC.length + IV_BYTES));
    decipher.setAAD(boundTo(runId));
    decipher.setAuthTag(blob.subarray(MAGIC.length + IV_BYTES, head));
    return Buffer.concat([decipher.update(blob.subarray(head)), decipher.final()]);
  } catch {
    return null;
  }
}
