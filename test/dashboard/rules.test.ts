import { describe, expect, it } from "vitest";
import { assertSameOrigin } from "../../lib/auth/csrf";
import { openToken, sealToken } from "../../lib/secrets/token-box";
import { sessionTokenOf } from "../../lib/auth/viewer";
import { DEFAULT_BOARD_LANES } from "../../lib/config/roster";
import { laneOf, laneRules, planMove } from "../../lib/dashboard/lanes";
import { availableActions, waitsFor, type RunFacts } from "../../lib/dashboard/run-status";
import { RUN_STATES } from "../../lib/engine/run-state";

const lanes = DEFAULT_BOARD_LANES;
const rules = laneRules(lanes);

describe("Board lanes", () => {
  it("an open Item goes to the right-most lane whose label it has, case-insensitively", () => {
    expect(lanes[laneOf(rules, { state: "open", labels: [] })!]!.name).toBe("Backlog");
    expect(lanes[laneOf(rules, { state: "open", labels: ["Ready-For-Agent"] })!]!.name).toBe("Ready for agent");
    expect(lanes[laneOf(rules, { state: "open", labels: ["ready-for-agent", "agent-working"] })!]!.name).toBe("In progress");
    expect(lanes[laneOf(rules, { state: "closed", labels: ["in-review"] })!]!.name).toBe("Done");
    expect(lanes[laneOf(rules, { state: "merged", labels: [] })!]!.name).toBe("Done");
  });

  it("without a catch-all lane an unlabelled open Item is not on the Board", () => {
    const only = laneRules([{ name: "Ready", label: "ready-for-agent", state: "open" }]);
    expect(laneOf(only, { state: "open", labels: ["bug"] })).toBeNull();
    expect(laneOf(only, { state: "closed", labels: [] })).toBeNull();
  });

  it("a move adds the lane's label and removes the other lanes' labels, keeping the rest", () => {
    expect(planMove(lanes, { state: "open", labels: ["bug", "Ready-For-Agent"] }, "in progress")).toMatchObject({
      add: ["agent-working"],
      remove: ["Ready-For-Agent"],
    });
    expect(planMove(lanes, { state: "open", labels: ["agent-working", "bug"] }, "Backlog")).toMatchObject({ add: [], remove: ["agent-working"] });
    expect(planMove(lanes, { state: "open", labels: ["in-review"] }, "In review")).toMatchObject({ add: [], remove: [] });
  });

  it("refuses a move to a closed lane, to an unknown lane, or of a closed Item, each with its token", () => {
    expect(() => planMove(lanes, { state: "open", labels: [] }, "Done")).toThrow(expect.objectContaining({ token: "lane_not_movable", status: 400 }));
    expect(() => planMove(lanes, { state: "open", labels: [] }, "Later")).toThrow(expect.objectContaining({ token: "unknown_lane", status: 400 }));
    expect(() => planMove(lanes, { state: "closed", labels: [] }, "Backlog")).toThrow(expect.objectContaining({ token: "item_closed", status: 409 }));
  });
});

describe("Run actions shown", () => {
  const facts = (state: RunFacts["state"], extra: Partial<RunFacts> = {}): RunFacts => ({
    state,
    waitingReason: null,
    pullRequestNumber: null,
    latestAttempt: null,
    latestFailedAttemptId: null,
    resolvedFailureAttemptId: null,
    ...extra,
  });

  it("follows the engine's FROM lists for every state", () => {
    const table = Object.fromEntries(
      RUN_STATES.map((s) => [
        s,
        availableActions(
          facts(s, s === "Failed" ? { latestFailedAttemptId: "r/agent/1" } : s === "Running" ? { latestAttempt: { id: "r/agent/1", state: "Running", number: 1 } } : {}),
          true,
        ),
      ]),
    );
    expect(table).toEqual({
      Pending: ["cancel"],
      Waiting: ["approve", "cancel"],
      Queued: ["cancel"],
      Running: ["intervene", "cancel"],
      Reviewing: ["push", "discard"],
      Succeeded: [],
      Failed: ["retry", "edit-and-retry", "resolve-failure"],
      Canceled: [],
    });
  });

  it("a resolved failure offers no resolve; an agent without input offers no intervene", () => {
    expect(availableActions(facts("Failed", { latestFailedAttemptId: "a", resolvedFailureAttemptId: "a" }), true)).not.toContain("resolve-failure");
    expect(availableActions(facts("Running", { latestAttempt: { id: "a", state: "Running", number: 1 } }), false)).toEqual(["cancel"]);
  });

  it("says what a Run waits for", () => {
    expect(waitsFor(facts("Waiting", { waitingReason: "approval" }))).toBe("an operator's approval");
    expect(waitsFor(facts("Queued"))).toBe("a free worker slot");
    expect(waitsFor(facts("Queued", { workerRunning: true }))).toBe("a free worker slot");
    expect(waitsFor(facts("Queued", { workerRunning: false }))).toBe("a worker, and no worker is running");
    expect(waitsFor(facts("Failed", { latestFailedAttemptId: "a" }))).toMatch(/retry or resolve/);
    expect(waitsFor(facts("Failed", { latestFailedAttemptId: "a", resolvedFailureAttemptId: "a" }))).toBeNull();
    expect(waitsFor(facts("Succeeded", { pullRequestNumber: 4 }))).toBe("review of pull request #4");
  });
});

describe("CSRF guard", () => {
  const h = (o: Record<string, string>) => new Headers({ host: "localhost:3000", ...o });
  it("lets reads, same-origin writes and non-browser clients through", () => {
    expect(() => assertSameOrigin("GET", h({ origin: "http://evil.example" }))).not.toThrow();
    expect(() => assertSameOrigin("POST", h({ origin: "http://localhost:3000" }))).not.toThrow();
    expect(() => assertSameOrigin("POST", h({ "sec-fetch-site": "same-origin" }))).not.toThrow();
    expect(() => assertSameOrigin("POST", h({}))).not.toThrow();
  });
  it("refuses writes from another site, another port, or an opaque origin", () => {
    for (const o of <Record<string, string>[]>[{ origin: "http://evil.example" }, { origin: "http://localhost:3001" }, { origin: "null" }, { "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }]) {
      expect(() => assertSameOrigin("POST", h(o)), JSON.stringify(o)).toThrow(expect.objectContaining({ token: "cross_origin_request", status: 403 }));
    }
  });
});

describe("the user's GitHub token at rest", () => {
  it("is sealed: only the same secret opens it", () => {
    const sealed = sealToken("gho_secret", "s1");
    expect(sealed).not.toContain("gho_secret");
    expect(openToken(sealed, "s1")).toBe("gho_secret");
    expect(openToken(sealed, "s2")).toBeNull();
    expect(openToken("garbage", "s1")).toBeNull();
  });

  it("the session cookie is read under its plain and __Secure- names", () => {
    expect(sessionTokenOf("a=1; authjs.session-token=abc")).toBe("abc");
    expect(sessionTokenOf("__Secure-authjs.session-token=xyz; authjs.session-token=abc")).toBe("xyz");
    expect(sessionTokenOf("other=1")).toBeNull();
    expect(sessionTokenOf(null)).toBeNull();
  });
});
