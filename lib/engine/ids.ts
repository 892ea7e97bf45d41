import { createHash } from "node:crypto";

/** An Item key: JSON ["github","owner/name",number], repository lower-cased. */
export function itemKey(repo: string, number: number): string {
  return JSON.stringify(["github", repo.toLowerCase(), number]);
}

/** The repository of an Item key (or a Tick's), lower-cased; null for text that is no Item key. */
export function repoOfItemKey(key: string): string | null {
  try {
    const parsed: unknown = JSON.parse(key);
    return Array.isArray(parsed) && parsed[0] === "github" && typeof parsed[1] === "string" ? parsed[1] : null;
  } catch {
    return null;
  }
}

/** The Item key of a schedule Loop's Tick: the repository itself. */
export function tickItemKey(repo: string): string {
  return JSON.stringify(["github", repo.toLowerCase()]);
}

/** Dedup key of an issue or pull request Event; the generation is appended once above zero. */
export function itemEventKey(loop: string, repo: string, number: number, hash: string, generation: number): string {
  const key: (string | number)[] = [loop, repo.toLowerCase(), number, hash];
  if (generation > 0) key.push(generation);
  return JSON.stringify(key);
}

/**
 * Dedup key of a comment's Event: the Item, the comment (kind and id) and the comment's content
 * hash, so an edited comment is a new Event and a redelivered one is not.
 */
export function commentEventKey(loop: string, repo: string, number: number, comment: { kind: string; id: number; hash: string }, generation: number): string {
  const key: (string | number)[] = [loop, repo.toLowerCase(), number, comment.kind, comment.id, comment.hash];
  if (generation > 0) key.push(generation);
  return JSON.stringify(key);
}

/** Dedup key of an operator's "run this Loop on this Item now": each ask is its own Event. */
export function dispatchEventKey(loop: string, repo: string, number: number, askId: string): string {
  return JSON.stringify(["operator-dispatch", loop, repo.toLowerCase(), number, askId]);
}

/** Dedup key of a schedule Tick. */
export function tickEventKey(loop: string, repo: string, scheduledAt: Date): string {
  return JSON.stringify([loop, repo.toLowerCase(), scheduledAt.toISOString()]);
}

/** Dedup key of an operator's approval of a Run. */
export function approvalEventKey(runId: string): string {
  return JSON.stringify(["operator-approval", runId]);
}

/** Dedup key of an operator's answer to a cycle budget ask. */
export function budgetResetEventKey(askId: string): string {
  return `cycle-budget-reset:${askId}`;
}

const RUN_ID_PREFIX = "@atelier/engine/Run-";

/** Run id: hex of the first 16 bytes of SHA-256 of a fixed prefix and the Event's dedup key. */
export function runId(dedupKey: string): string {
  return createHash("sha256").update(RUN_ID_PREFIX + dedupKey).digest("hex").slice(0, 32);
}

export const AGENT_STEP = "agent";

/** Attempt id: `<runId>/<step>/<n>`. */
export function attemptId(run: string, step: string, number: number): string {
  return `${run}/${step}/${number}`;
}

/** Parses an Item key back into its repository and number (null for a Tick's key). */
export function parseItemKey(key: string): { repo: string; number: number | null } {
  const parsed: unknown = JSON.parse(key);
  if (!Array.isArray(parsed) || parsed[0] !== "github" || typeof parsed[1] !== "string") {
    throw new Error(`not an Item key: ${key}`);
  }
  return { repo: parsed[1], number: typeof parsed[2] === "number" ? parsed[2] : null };
}
