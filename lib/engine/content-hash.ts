import { createHash } from "node:crypto";

/** Keys whose values change without the content changing; the hash ignores them at any depth. */
const TIMESTAMP_KEYS = new Set(["createdAt", "updatedAt", "closedAt", "mergedAt", "submittedAt"]);

/** Canonical JSON: object keys sorted, timestamps removed, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((k) => !TIMESTAMP_KEYS.has(k) && (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(",")}}`;
}

/** SHA-256 (hex) of the projection's canonical JSON. */
export function contentHash(projection: unknown): string {
  return createHash("sha256").update(canonicalJson(projection)).digest("hex");
}
