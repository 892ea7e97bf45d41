import { describe, expect, it } from "vitest";
import { budgetAdmits, decideClaim, intentOf, replaces, type ClaimFacts, type Intent } from "../../lib/engine/claim-decision";
import { OPEN } from "../../lib/engine/run-state";

// Every combination of the facts the claim reads, each value chosen where the decision could
// turn: the Item at generation 1, an Event at 1 or at 0, a budget of 3 with 2 or 3 Runs holding it,
// the Event and the open Run each a read of the Item, a dispatch, or one of two comments' asks.
const RECORDED: ClaimFacts["recorded"][] = [null, { tag: "Run", runId: "own", state: "Pending" }, { tag: "Ignored" }, { tag: "Undecided" }];
const INTENTS: Intent[] = ["state", "dispatch", "comment:issue_comment:1", "comment:issue_comment:2"];
const BLOCKING = [
  null,
  ...OPEN.flatMap((state) => [null, 1].flatMap((reservedGeneration) => INTENTS.map((intent) => ({ id: "b", state, reservedGeneration, intent })))),
];

function* everyCombination(): Generator<ClaimFacts> {
  for (const recorded of RECORDED)
    for (const kind of ["item", "tick"] as const)
      for (const generation of [0, 1])
        for (const intent of INTENTS)
          for (const blocking of BLOCKING)
            for (const maxCycles of [null, 3])
              for (const reserved of [2, 3])
                for (const ask of [false, true]) yield { event: { kind, generation, maxCycles, intent }, recorded, blocking, generation: 1, ask, reserved };
}

/**
 * The rule, as a table read top down, the first row that applies deciding: what the ledger
 * says of the Event, then its generation, then what runs on the Item, then the budget.
 */
const RULES: [string, (f: ClaimFacts) => boolean, (f: ClaimFacts) => unknown][] = [
  ["its Run recorded", (f) => f.recorded?.tag === "Run", () => ({ tag: "Recorded", runId: "own", state: "Pending" })],
  ["ignored before", (f) => f.recorded?.tag === "Ignored", () => ({ tag: "Ignore", reason: "ignored_event", record: false })],
  ["older than the Item", (f) => f.event.kind === "item" && f.event.generation < f.generation, () => ({ tag: "Ignore", reason: "old_generation", record: true })],
  // a Reviewing Run is started too: its held commits are never superseded (ADR 0058)
  ["a Run is running or its commits wait for review", (f) => f.blocking?.state === "Running" || f.blocking?.state === "Reviewing", () => ({ tag: "Queue", behind: "b" })],
  // ADR 0073: a person's request waits for its turn; only an edit of the same comment replaces its ask
  [
    "an unstarted Run asks for what the Event does not replace",
    (f) => f.blocking !== null && !(f.blocking.intent === "state" || (f.blocking.intent.startsWith("comment:") && f.blocking.intent === f.event.intent)),
    () => ({ tag: "Queue", behind: "b" }),
  ],
  [
    "the budget is spent",
    (f) => f.event.maxCycles !== null && !budgetAdmits(f.reserved - (f.blocking?.reservedGeneration === f.generation ? 1 : 0), f.event.maxCycles, f.ask),
    (f) => ({ tag: "Block", supersede: supersedeOf(f), generation: 1, reserved: f.reserved - (f.blocking?.reservedGeneration === f.generation ? 1 : 0) }),
  ],
  ["otherwise", () => true, (f) => ({ tag: "Open", supersede: supersedeOf(f), reservedGeneration: f.event.maxCycles === null ? null : 1 })],
];

const supersedeOf = (f: ClaimFacts) => (f.blocking ? { id: "b", reservedGeneration: f.blocking.reservedGeneration } : null);

describe("the claim decision", () => {
  const all = [...everyCombination()];

  it("is the table's, for every combination of the facts", () => {
    expect(all.length).toBe(4 * 2 * 2 * 4 * (1 + 5 * 2 * 4) * 2 * 2 * 2);
    const byRule = new Map<string, number>();
    for (const f of all) {
      const [name, , outcome] = RULES.find(([, applies]) => applies(f))!;
      byRule.set(name, (byRule.get(name) ?? 0) + 1);
      expect(decideClaim(f), JSON.stringify(f)).toEqual(outcome(f));
    }
    // every row decides some combination
    expect([...byRule.keys()].sort()).toEqual(RULES.map(([name]) => name).sort());
  });

  it("commits a supersede even when the budget then blocks", () => {
    const f: ClaimFacts = {
      event: { kind: "item", generation: 1, maxCycles: 3, intent: "state" },
      recorded: null,
      blocking: { id: "b", state: "Queued", reservedGeneration: null, intent: "state" },
      generation: 1,
      ask: false,
      reserved: 3,
    };
    expect(decideClaim(f)).toEqual({ tag: "Block", supersede: { id: "b", reservedGeneration: null }, generation: 1, reserved: 3 });
  });

  it("gives a schedule Loop no cycle budget: a spent budget or an ask never blocks it", () => {
    const f: ClaimFacts = { event: { kind: "tick", generation: 0, maxCycles: null, intent: "state" }, recorded: null, blocking: null, generation: 1, ask: true, reserved: 99 };
    expect(decideClaim(f)).toEqual({ tag: "Open", supersede: null, reservedGeneration: null });
  });

  it("reads an Event's intent from its submission: a dispatch is the operator's, a comment's ask is that comment's", () => {
    expect(intentOf({})).toBe("state");
    expect(intentOf({ actor: { source: "webhook" } })).toBe("state");
    expect(intentOf({ actor: { source: "operator" } })).toBe("dispatch");
    expect(intentOf({ actor: { source: "comment" }, comment: { kind: "review", id: 9 } })).toBe("comment:review:9");
    expect(replaces("comment:review:9", "comment:review:9")).toBe(true);
    expect(replaces("comment:review:8", "comment:review:9")).toBe(false);
    expect(replaces("dispatch", "state")).toBe(true);
    expect(replaces("dispatch", "dispatch")).toBe(false);
  });
});
