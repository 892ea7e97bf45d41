import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Sealed values at rest (AES-256-GCM under a key derived from an instance secret, one purpose
 * per key): users' GitHub tokens in `users.token` under AUTH_SECRET, the App's credentials in
 * `app_credentials` under ATELIER_SECRET_KEY. A database dump alone hands out none of them.
 */
const VERSION = "v1";
const SEALED = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/;

function keyOf(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "atelier", purpose, 32));
}

export function seal(value: string, secret: string, purpose: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(secret, purpose), iv);
  const sealed = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), sealed.toString("base64url")].join(".");
}

/** Whether a stored value has the shape of a sealed one (a value stored before sealing has not). */
export const isSealed = (value: string): boolean => SEALED.test(value);

/** The value, or null when it was sealed under another secret or is damaged. */
export function unseal(value: string | null, secret: string, purpose: string): string | null {
  if (!value || !isSealed(value)) return null;
  const [, iv, tag, sealed] = value.split(".") as [string, string, string, string];
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(secret, purpose), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(sealed, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

const USER_TOKEN = "atelier user token v1";

/** Seals a user's GitHub OAuth token; it never leaves the server (no session payload, page or log). */
export const sealToken = (token: string, secret: string): string => seal(token, secret, USER_TOKEN);

export const openToken = (value: string | null, secret: string): string | null => unseal(value, secret, USER_TOKEN);
