import { createHash } from "node:crypto";

/** A signed 64-bit advisory lock key for a name (stable across processes and hosts). */
export function advisoryKey(...parts: string[]): bigint {
  const digest = createHash("sha256").update(parts.join("\u0000")).digest();
  return digest.readBigInt64BE(0);
}

/** The lock that serializes every claim decision of one Loop on one Item. */
export const loopItemLock = (loop: string, itemKey: string): bigint => advisoryKey("loop-item", loop, itemKey);
