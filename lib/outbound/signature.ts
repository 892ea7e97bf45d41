import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The signature of an outbound webhook: `X-Atelier-Signature: t=<unix seconds>,v1=<hex>`,
 * where the hex is HMAC-SHA256 with the hook's secret over `<t>.<raw body>`. The timestamp
 * lets a receiver refuse an old delivery replayed at it.
 */
export const SIGNATURE_HEADER = "X-Atelier-Signature";
export const DELIVERY_HEADER = "X-Atelier-Delivery";
export const EVENT_HEADER = "X-Atelier-Event";

const mac = (secret: string, t: number, body: string): string =>
  createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");

export function signatureHeader(secret: string, body: string, at: Date = new Date()): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${mac(secret, t, body)}`;
}

/**
 * For receivers (and the tests): whether a signature header matches the body under the secret
 * and its timestamp is within `toleranceSeconds` of now.
 */
export function verifySignature(
  header: string | null | undefined,
  secret: string,
  body: string,
  opts: { toleranceSeconds?: number; now?: Date } = {},
): boolean {
  if (!header) return false;
  const parts = new Map(header.split(",").map((p) => p.trim().split("=") as [string, string]));
  const t = Number(parts.get("t"));
  const given = parts.get("v1");
  if (!Number.isInteger(t) || !given || !/^[0-9a-f]{64}$/.test(given)) return false;
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? 300)) return false;
  return timingSafeEqual(Buffer.from(given, "hex"), Buffer.from(mac(secret, t, body), "hex"));
}
