import { describe, expect, it } from "vitest";
import { isClosed, isOpen, isStartable, isUnstarted, needsWorker } from "../../lib/engine/run-predicates";
import {
  allows,
  FROM,
  transition,
  TRANSITIONS,
  type Transition,
  approve,
  cancel,
  continueRunning,
  discardReviewed,
  fail,
  holdForReview,
  parkForApproval,
  pushReviewed,
  retry,
  revoke,
  RUN_STATES,
  start,
  succeed,
  supersede,
  type Failed,
  type Pending,
  type Queued,
  type Reviewing,
  type Running,
  type Succeeded,
  type Waiting,
} from "../../lib/engine/run-state";

const pending: Pending = { tag: "Pending" };
const waiting: Waiting = { tag: "Waiting" };
const queued: Queued = { tag: "Queued" };
const running: Running = { tag: "Running" };
const failed: Failed = { tag: "Failed" };
const succeeded: Succeeded = { tag: "Succeeded" };
const reviewing: Reviewing = { tag: "Reviewing" };

describe("run state transitions", () => {
  it("moves through the legal lifecycle", () => {
    expect(parkForApproval(pending)).toEqual({ tag: "Waiting" });
    expect(approve(waiting)).toEqual({ tag: "Queued" });
    expect(start(pending)).toEqual({ tag: "Running" });
    expect(start(queued)).toEqual({ tag: "Running" });
    expect(continueRunning(running)).toEqual({ tag: "Running" });
    expect(succeed(running)).toEqual({ tag: "Succeeded" });
    expect(fail(running)).toEqual({ tag: "Failed" });
    expect(retry(failed)).toEqual({ tag: "Running" });
    // commits a writer must see first (ADR 0058): held, then pushed or discarded by that writer
    expect(holdForReview(running)).toEqual({ tag: "Reviewing" });
    expect(pushReviewed(reviewing)).toEqual({ tag: "Succeeded" });
    expect(discardReviewed(reviewing, "octo")).toEqual({ tag: "Canceled", reason: { tag: "OperatorCanceled", by: "octo" } });
  });

  it("cancels from every open state with the reason that says why", () => {
    for (const s of [pending, waiting, queued, running]) {
      expect(cancel(s, "octo")).toEqual({ tag: "Canceled", reason: { tag: "OperatorCanceled", by: "octo" } });
    }
    expect(supersede(waiting, "evt")).toEqual({ tag: "Canceled", reason: { tag: "Superseded", by: "evt" } });
    expect(revoke(queued)).toEqual({ tag: "Canceled", reason: { tag: "Revoked" } });
  });

  it("rejects illegal transitions at compile time", () => {
    // Each line below would not compile without its @ts-expect-error: `npm test` typechecks this file.
    // @ts-expect-error approving needs a Waiting Run
    approve(pending);
    // @ts-expect-error a running Attempt is never superseded
    supersede(running, "evt");
    // @ts-expect-error a running Run is never revoked
    revoke(running);
    // @ts-expect-error a Succeeded Run cannot be retried
    retry(succeeded);
    // @ts-expect-error a Waiting Run cannot start before approval
    start(waiting);
    // @ts-expect-error a closed Run cannot be canceled
    cancel(failed, "octo");
    // @ts-expect-error held commits are discarded (their ref deleted), never merely canceled
    cancel(reviewing, "octo");
    // @ts-expect-error held commits are never superseded by a newer Event: it waits behind them
    supersede(reviewing, "evt");
    // @ts-expect-error only a finished Attempt holds commits
    holdForReview(pending);
    // @ts-expect-error a store write guarded by a state its function refuses does not compile
    transition("approve", ["Waiting", "Running"], approve);
    // @ts-expect-error nor one that starts a Run from Waiting
    transition("start", ["Pending", "Waiting"], start);
    // @ts-expect-error a Transition is made by `transition` only, never written by hand
    const forged: Transition = { action: "approve", from: ["Running"], to: "Queued" };
    void forged;
  });

  it("gives every store write the guard and the target of its typed function", () => {
    const table = Object.entries(TRANSITIONS).map(([name, t]) => [name, t.action, t.from, t.to]);
    expect(table).toEqual([
      ["parkForApproval", "parkForApproval", ["Pending"], "Waiting"],
      ["approve", "approve", ["Waiting"], "Queued"],
      ["start", "start", ["Pending", "Queued"], "Running"],
      ["continueRunning", "continueRunning", ["Running"], "Running"],
      ["succeed", "succeed", ["Running"], "Succeeded"],
      ["fail", "fail", ["Running"], "Failed"],
      ["holdForReview", "holdForReview", ["Running"], "Reviewing"],
      ["pushReviewed", "pushReviewed", ["Reviewing"], "Succeeded"],
      ["discardReviewed", "discardReviewed", ["Reviewing"], "Canceled"],
      ["retry", "retry", ["Failed"], "Running"],
      ["cancel", "cancel", ["Pending", "Waiting", "Queued", "Running"], "Canceled"],
      ["supersede", "supersede", ["Pending", "Waiting", "Queued"], "Canceled"],
      ["revoke", "revoke", ["Pending", "Waiting", "Queued"], "Canceled"],
      ["resolveFailure", "resolveFailure", ["Failed"], "Failed"],
      ["editAndRetry", "editAndRetry", ["Failed"], "Running"],
      ["parkEngineFailure", "parkEngineFailure", ["Pending", "Queued"], "Waiting"],
      ["failEngineFailure", "failEngineFailure", ["Running"], "Failed"],
      ["retryParked", "retryParked", ["Waiting"], "Queued"],
    ]);
    for (const [name, t] of Object.entries(TRANSITIONS)) expect(t.from, name).toBe(FROM[name as keyof typeof FROM]);
  });
});

describe("run state predicates", () => {
  it("classify every state once", () => {
    const table = RUN_STATES.map((s) => [s, isOpen(s), isUnstarted(s), isStartable(s), needsWorker(s), isClosed(s)]);
    expect(table).toEqual([
      ["Pending", true, true, true, true, false],
      ["Waiting", true, true, false, false, false],
      ["Queued", true, true, true, true, false],
      ["Running", true, false, false, true, false],
      ["Reviewing", true, false, false, false, false],
      ["Succeeded", false, false, false, false, true],
      ["Failed", false, false, false, false, true],
      ["Canceled", false, false, false, false, true],
    ]);
  });

  it("allow operator actions only in their source states", () => {
    expect(allows("approve", "Waiting")).toBe(true);
    expect(allows("approve", "Queued")).toBe(false);
    expect(allows("retry", "Failed")).toBe(true);
    expect(allows("retry", "Canceled")).toBe(false);
    expect(allows("cancel", "Running")).toBe(true);
    expect(allows("cancel", "Succeeded")).toBe(false);
    expect(allows("resolveFailure", "Failed")).toBe(true);
  });
});
