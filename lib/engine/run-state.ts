/**
 * Run states and their legal transitions. Each transition function accepts only its source
 * states, so an illegal transition does not compile. The store writes a state only through a
 * `Transition` (TRANSITIONS below): its SQL guard is the source list (`FROM`) and the state it
 * writes is what the function returns, and `transition` compiles only when the function
 * accepts every state of that list — so a lost race is a conflict, never an overwrite.
 */

export const RUN_STATES = ["Pending", "Waiting", "Queued", "Running", "Reviewing", "Succeeded", "Failed", "Canceled"] as const;
export type RunStateName = (typeof RUN_STATES)[number];

export type CancelReason =
  | { tag: "OperatorCanceled"; by: string }
  | { tag: "Superseded"; by: string }
  | { tag: "Revoked" };

export type Pending = { tag: "Pending" };
export type Waiting = { tag: "Waiting" };
export type Queued = { tag: "Queued" };
export type Running = { tag: "Running" };
/** The agent's commits are held off every branch until a writer reviews them and pushes or discards them (ADR 0058). */
export type Reviewing = { tag: "Reviewing" };
export type Succeeded = { tag: "Succeeded" };
export type Failed = { tag: "Failed" };
export type Canceled = { tag: "Canceled"; reason: CancelReason };
export type RunState = Pending | Waiting | Queued | Running | Reviewing | Succeeded | Failed | Canceled;

type StateNamed<N extends RunStateName> = Extract<RunState, { tag: N }>;

/** Open: an Attempt may still happen, or its work still waits for a person (Reviewing). */
export const OPEN = ["Pending", "Waiting", "Queued", "Running", "Reviewing"] as const satisfies readonly RunStateName[];
/** Cancelable: an operator's cancel stops it; a Reviewing Run is discarded instead (its held commits go with it). */
export const CANCELABLE = ["Pending", "Waiting", "Queued", "Running"] as const satisfies readonly RunStateName[];
/** Unstarted: no Attempt has begun; supersede and revoke may touch it. */
export const UNSTARTED = ["Pending", "Waiting", "Queued"] as const satisfies readonly RunStateName[];
/** Startable: a first Attempt may begin (after any approval). */
export const STARTABLE = ["Pending", "Queued"] as const satisfies readonly RunStateName[];

export type Open = StateNamed<(typeof OPEN)[number]>;
export type Unstarted = StateNamed<(typeof UNSTARTED)[number]>;
export type Startable = StateNamed<(typeof STARTABLE)[number]>;

/** The source states of every transition; the store's SQL guards read these lists. */
export const FROM = {
  parkForApproval: ["Pending"],
  approve: ["Waiting"],
  start: STARTABLE,
  /** the next Attempt of a Running Run after an automatic retry */
  continueRunning: ["Running"],
  succeed: ["Running"],
  fail: ["Running"],
  /** the last Attempt made commits a writer must see before any branch has them */
  holdForReview: ["Running"],
  /** a writer pushed the held commits: the branch and the pull request exist now */
  pushReviewed: ["Reviewing"],
  /** a writer discarded the held commits */
  discardReviewed: ["Reviewing"],
  retry: ["Failed"],
  cancel: CANCELABLE,
  supersede: UNSTARTED,
  revoke: UNSTARTED,
  /** marks the latest failed Attempt handled; the state does not change */
  resolveFailure: ["Failed"],
  /** edits the task of a failed Run, then retries it */
  editAndRetry: ["Failed"],
  /** parks a Run whose job kept failing inside Atelier (before any Attempt): Waiting, reason engine_failed */
  parkEngineFailure: STARTABLE,
  /** the same, for a Run between Attempts: it fails, with the engine's error */
  failEngineFailure: ["Running"],
  /** an operator retries a Run parked by engine failures */
  retryParked: ["Waiting"],
} as const satisfies Record<string, readonly RunStateName[]>;

/** Parks a Pending Run on its Loop's approval gate. */
export const parkForApproval = (_s: Pending): Waiting => ({ tag: "Waiting" });
/** Approved: the Run now waits for a worker slot. */
export const approve = (_s: Waiting): Queued => ({ tag: "Queued" });
/** The first Attempt begins. */
export const start = (_s: Startable): Running => ({ tag: "Running" });
/** An automatic retry keeps the Run Running while the next Attempt begins. */
export const continueRunning = (_s: Running): Running => ({ tag: "Running" });
export const succeed = (_s: Running): Succeeded => ({ tag: "Succeeded" });
/** The last Attempt made commits that wait for a writer's review before they are pushed. */
export const holdForReview = (_s: Running): Reviewing => ({ tag: "Reviewing" });
/** A writer pushed the held commits. */
export const pushReviewed = (_s: Reviewing): Succeeded => ({ tag: "Succeeded" });
/** A writer discarded the held commits. */
export const discardReviewed = (_s: Reviewing, by: string): Canceled => ({ tag: "Canceled", reason: { tag: "OperatorCanceled", by } });
/** The last Attempt failed and no automatic retry applies. */
export const fail = (_s: Running): Failed => ({ tag: "Failed" });
/** The Run's job kept failing inside Atelier before any Attempt: parked until an operator retries. */
export const parkEngineFailure = (_s: Startable): Waiting => ({ tag: "Waiting" });
/** An operator retries a parked Run: it waits for a worker slot again. */
export const retryParked = (_s: Waiting): Queued => ({ tag: "Queued" });
/** Operator retry: Attempt n+1 of the same Run. */
export const retry = (_s: Failed): Running => ({ tag: "Running" });
/** The latest failed Attempt is marked handled: the Run stays Failed. */
export const resolveFailure = (s: Failed): Failed => s;
export const cancel = (_s: StateNamed<(typeof CANCELABLE)[number]>, by: string): Canceled => ({ tag: "Canceled", reason: { tag: "OperatorCanceled", by } });
/** A newer Event for the same Item replaced unstarted work. A running Attempt is never superseded. */
export const supersede = (_s: Unstarted, byEvent: string): Canceled => ({
  tag: "Canceled",
  reason: { tag: "Superseded", by: byEvent },
});
/** The Item stopped matching the Loop's `if:`. */
export const revoke = (_s: Unstarted): Canceled => ({ tag: "Canceled", reason: { tag: "Revoked" } });

const madeByTransition: unique symbol = Symbol("transition");

/** A state write of the store: the states it may move from (its SQL guard), and the state it writes. */
export interface Transition<To extends RunStateName = RunStateName> {
  readonly action: keyof typeof FROM;
  readonly from: readonly RunStateName[];
  readonly to: To;
  /** only `transition` makes one */
  readonly [madeByTransition]: true;
}

/**
 * The Transition `move` makes from the states `from`: it compiles only when `move` accepts
 * every one of them, and it writes the state `move` returns.
 */
export function transition<F extends readonly RunStateName[], To extends RunState>(
  action: keyof typeof FROM,
  from: F,
  move: (s: StateNamed<F[number]>, by: string) => To,
): Transition<To["tag"]> {
  // the sources are open or Failed states, which carry nothing but their tag
  const to = move({ tag: from[0] } as StateNamed<F[number]>, "").tag;
  return { action, from, to, [madeByTransition]: true };
}

/** Every state write of the store, each of its typed function. */
export const TRANSITIONS = {
  parkForApproval: transition("parkForApproval", FROM.parkForApproval, parkForApproval),
  approve: transition("approve", FROM.approve, approve),
  start: transition("start", FROM.start, start),
  continueRunning: transition("continueRunning", FROM.continueRunning, continueRunning),
  succeed: transition("succeed", FROM.succeed, succeed),
  fail: transition("fail", FROM.fail, fail),
  holdForReview: transition("holdForReview", FROM.holdForReview, holdForReview),
  pushReviewed: transition("pushReviewed", FROM.pushReviewed, pushReviewed),
  discardReviewed: transition("discardReviewed", FROM.discardReviewed, discardReviewed),
  retry: transition("retry", FROM.retry, retry),
  cancel: transition("cancel", FROM.cancel, cancel),
  supersede: transition("supersede", FROM.supersede, supersede),
  revoke: transition("revoke", FROM.revoke, revoke),
  resolveFailure: transition("resolveFailure", FROM.resolveFailure, resolveFailure),
  editAndRetry: transition("editAndRetry", FROM.editAndRetry, retry),
  parkEngineFailure: transition("parkEngineFailure", FROM.parkEngineFailure, parkEngineFailure),
  failEngineFailure: transition("failEngineFailure", FROM.failEngineFailure, fail),
  retryParked: transition("retryParked", FROM.retryParked, retryParked),
} as const satisfies Record<keyof typeof FROM, Transition>;

/** Whether an operator action is legal in this state. */
export const allows = (action: keyof typeof FROM, s: RunStateName): boolean => (FROM[action] as readonly RunStateName[]).includes(s);
