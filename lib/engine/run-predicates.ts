import { OPEN, RUN_STATES, STARTABLE, UNSTARTED, type RunStateName } from "./run-state";

/**
 * Every question asked of a Run's state, once: each is a list of states, read by its
 * TypeScript predicate and by its SQL twin (`RUN_STATE_SQL`), so the two cannot disagree
 * (test/engine/run-predicates.test.ts asks Postgres over every state).
 */
const QUESTIONS = {
  /** Open: an Attempt may still happen. */
  isOpen: OPEN,
  /** Unstarted: no Attempt has begun; supersede and revoke may touch it. */
  isUnstarted: UNSTARTED,
  /** Startable: a first Attempt may begin (after any approval). */
  isStartable: STARTABLE,
  isRunning: ["Running"],
  /** Started and not closed: an Event for its Loop and Item waits behind it (it is never superseded). */
  isStarted: ["Running", "Reviewing"],
  /** Its commits wait for a writer: Needs you's "Review and push". */
  isReviewing: ["Reviewing"],
  /** Closed (terminal): no Attempt will happen without an operator; an outbound webhook tells of it. */
  isClosed: RUN_STATES.filter((s) => !(OPEN as readonly RunStateName[]).includes(s)),
  /** A worker job should exist for this Run (Waiting Runs have none until approved). */
  needsWorker: [...STARTABLE, "Running"],
} as const satisfies Record<string, readonly RunStateName[]>;

export type RunQuestion = keyof typeof QUESTIONS;

/** The states of which `question` holds. */
export const statesWhere = (question: RunQuestion): readonly RunStateName[] => QUESTIONS[question];

const holds = (question: RunQuestion) => (s: string): boolean => (QUESTIONS[question] as readonly string[]).includes(s);

export const isOpen = holds("isOpen");
export const isUnstarted = holds("isUnstarted");
export const isStartable = holds("isStartable");
export const isRunning = holds("isRunning");
export const isStarted = holds("isStarted");
export const isReviewing = holds("isReviewing");
export const isClosed = holds("isClosed");
export const needsWorker = holds("needsWorker");

/** SQL twins: `RUN_STATE_SQL.isOpen("r.state")` is `r.state IN ('Pending', …)`. */
export const RUN_STATE_SQL = Object.fromEntries(
  (Object.keys(QUESTIONS) as RunQuestion[]).map((q) => [q, (column: string) => `${column} IN (${QUESTIONS[q].map((s) => `'${s}'`).join(", ")})`]),
) as Record<RunQuestion, (column: string) => string>;
