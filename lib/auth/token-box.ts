import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Seals a user's GitHub OAuth token for the `users.token` column (AES-256-GCM under a key
 * derived from the auth secret), so a database dump alone does not hand out tokens. The token
 * never leaves the server: no session payload, no page and no log carries it.
 */
const VERSION = "v1";

function keyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "atelier", "atelier user token v1", 32));
}

export function sealToken(token: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(secret), iv);
  const sealed = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), sealed.toString("base64url")].join(".");
}

/** The token, or null when the value was sealed under another secret or is damaged. */
export function openToken(value: string | null, secret: string): string | null {
  if (!value) return null;
  const [version, iv, tag, sealed] = value.split(".");
  if (version !== VERSION || !iv || !tag || sealed === undefined) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(secret), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(sealed, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
