import { canonicalJson, contentHash } from "../engine/content-hash";
import type { LoopDefinition } from "../loops/config-schema";
import type { PollCursor, PollState } from "../store/items/poll-cursors";

/** GitHub timestamps have one-second resolution: the listing reads a little before the watermark. */
export const SINCE_OVERLAP_MS = 5_000;

/**
 * The signature of the Loops that act on Items: the unpaused issues and pull_requests Loops
 * with their definitions. Pausing, unpausing or editing one of them changes it.
 */
export function activeLoopSignature(loops: readonly LoopDefinition[]): string {
  const active = loops
    .map(({ line: _line, ...definition }) => definition)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return contentHash(JSON.parse(canonicalJson(active)));
}

/**
 * Whether this cycle must start from an empty cursor: an operator reset a cycle budget, or the
 * set of active Loops changed since the cursor was written (every Item is judged again).
 */
export function startsFromEmptyCursor(state: PollState, signature: string): boolean {
  return state.resetPending || state.cursor.loops !== signature;
}

/** The `since` to send: a little before the watermark, or none. */
export function listingSince(cursor: PollCursor): Date | null {
  return cursor.since ? new Date(cursor.since.getTime() - SINCE_OVERLAP_MS) : null;
}
