import { isStarted, isUnstarted } from "./run-predicates";
import type { RunStateName } from "./run-state";

/** The open Run of the same Loop and Item, if any. */
export interface BlockingRun {
  id: string;
  state: RunStateName;
}

/**
 * What an Event asks for, its intent (ADR 0073). `state`: the Item's content as read — successive reads of
 * one Item are snapshots of one thing, and the newest replaces the older. A person's request is
 * its own work, never replaced by anyone else's: `comment:<kind>:<id>`, one comment's ask (only
 * an edit of that comment replaces it), and `dispatch`, an operator's "Run now".
 */
export type Intent = "state" | "dispatch" | `comment:${string}`;

/** What the Event's submission asks for (lib/store/runs/claim.ts INTENT_SQL is its SQL twin). */
export function intentOf(submission: { comment?: { kind: string; id: number } | null; actor?: { source: string } | null }): Intent {
  if (submission.actor?.source === "operator") return "dispatch";
  if (submission.comment) return `comment:${submission.comment.kind}:${submission.comment.id}`;
  return "state";
}

/** Whether a person asked for this work (a comment, a dispatch): the Loop's `if:` neither revokes nor drops it. */
export const isRequest = (intent: Intent): boolean => intent !== "state";

/**
 * Whether an Event asking `newer` replaces work asking `older` (an unstarted Run is superseded, a
 * queued Event ignored): a read of the Item replaces an older read, and so does an operator's
 * dispatch (it runs the Loop on the Item as it is now); an edit of a comment replaces that
 * comment's ask. Nothing replaces a dispatch or another comment's ask: they wait their turn.
 */
export const replaces = (newer: Intent, older: Intent): boolean => older === "state" || (older !== "dispatch" && newer === older);

/** Everything the claim decision reads: the Event as observed, and what the ledger holds for it and its Item. */
export interface ClaimFacts {
  event: {
    kind: "item" | "tick";
    generation: number;
    /** the Loop's cycle budget; null for schedule Loops, which have none */
    maxCycles: number | null;
    /** what the Event asks for */
    intent: Intent;
  };
  /** what the ledger recorded of this Event already: its Run, its being ignored, or a status with neither (Queued, Blocked) */
  recorded: { tag: "Run"; runId: string; state: RunStateName } | { tag: "Ignored" } | { tag: "Undecided" } | null;
  /** the open Run of the same Loop on the Item, and what its Event asked for */
  blocking: (BlockingRun & { reservedGeneration: number | null; intent: Intent }) | null;
  /** the Item's cycle generation, whether an operator is asked to reset it, and the Runs holding it */
  generation: number;
  ask: boolean;
  reserved: number;
}

/** An unstarted Run the decision supersedes. */
export interface Superseded {
  id: string;
  reservedGeneration: number | null;
}

export type ClaimDecision =
  /** the Event was claimed before: its Run, as it is */
  | { tag: "Recorded"; runId: string; state: RunStateName }
  /** the Event was ignored before (`record`: false) or is older than the Item's generation (`record`: true) */
  | { tag: "Ignore"; reason: "ignored_event" | "old_generation"; record: boolean }
  /** a started Attempt always finishes, and a person's request is not replaced: the Event waits behind it */
  | { tag: "Queue"; behind: string }
  /** the cycle budget is spent: an operator is asked; `supersede` is canceled all the same */
  | { tag: "Block"; supersede: Superseded | null; generation: number; reserved: number }
  /** a new Run opens (after the admission gate, when it is given), in place of `supersede`, holding `reservedGeneration` */
  | { tag: "Open"; supersede: Superseded | null; reservedGeneration: number | null };

/**
 * The one claim decision: what an Event does, from the facts read. The store carries it out
 * under the (Loop, Item) lock (lib/store/runs/claim.ts).
 */
export function decideClaim(f: ClaimFacts): ClaimDecision {
  if (f.recorded?.tag === "Run") return { tag: "Recorded", runId: f.recorded.runId, state: f.recorded.state };
  if (f.recorded?.tag === "Ignored") return { tag: "Ignore", reason: "ignored_event", record: false };
  if (isOlderThanItem(f)) return { tag: "Ignore", reason: "old_generation", record: true };
  if (f.blocking && (isStarted(f.blocking.state) || !replaces(f.event.intent, f.blocking.intent))) return { tag: "Queue", behind: f.blocking.id };
  return decideOpening({ ...f, supersede: supersedeOf(f) });
}

/** The facts of an opening: no Run running on the Item, at most an unstarted one to supersede. */
export type OpeningFacts = Pick<ClaimFacts, "generation" | "ask" | "reserved"> & { event: Omit<ClaimFacts["event"], "intent">; supersede: Superseded | null };

/** Whether the Event opens its Run (in place of `supersede`) or the cycle budget blocks it. */
export function decideOpening(f: OpeningFacts): Extract<ClaimDecision, { tag: "Open" | "Block" }> {
  const { maxCycles } = f.event;
  const reserved = reservedAfter(f, f.supersede);
  if (maxCycles !== null && !budgetAdmits(reserved, maxCycles, f.ask)) return { tag: "Block", supersede: f.supersede, generation: f.generation, reserved };
  return { tag: "Open", supersede: f.supersede, reservedGeneration: maxCycles === null ? null : f.generation };
}

/** The unstarted Run the Event would supersede, if the Item has one. */
const supersedeOf = (f: Pick<ClaimFacts, "blocking">): Superseded | null =>
  f.blocking && isUnstarted(f.blocking.state) ? { id: f.blocking.id, reservedGeneration: f.blocking.reservedGeneration } : null;

/** An Item Event observed at an older generation than the Item's budget now is. */
export const isOlderThanItem = (f: { event: Pick<ClaimFacts["event"], "kind" | "generation">; generation: number }): boolean => f.event.kind === "item" && f.event.generation < f.generation;

/** The Runs holding the Item's current generation once `superseded` (unstarted) gave its reservation back. */
export const reservedAfter = (f: Pick<ClaimFacts, "generation" | "reserved">, superseded: Superseded | null): number =>
  superseded?.reservedGeneration === f.generation ? f.reserved - 1 : f.reserved;

/** The default cycle budget: Runs one Loop may open on one Item between operator resets. */
export const DEFAULT_MAX_CYCLES = 3;

/** Whether the Item's budget admits one more Run of this Loop. */
export function budgetAdmits(reserved: number, maxCycles: number, askPending: boolean): boolean {
  return !askPending && reserved < maxCycles;
}
