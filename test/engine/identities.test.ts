import { describe, expect, it } from "vitest";
import { canonicalJson, contentHash } from "../../lib/engine/content-hash";
import {
  approvalEventKey,
  attemptId,
  budgetResetEventKey,
  itemEventKey,
  itemKey,
  parseItemKey,
  runId,
  tickEventKey,
  tickItemKey,
} from "../../lib/engine/ids";

describe("identities", () => {
  it("keys an Item by lower-cased repository and number", () => {
    expect(itemKey("Demo-Org/WebApp", 7)).toBe('["github","demo-org/webapp",7]');
    expect(tickItemKey("Demo-Org/WebApp")).toBe('["github","demo-org/webapp"]');
    expect(parseItemKey('["github","demo-org/webapp",7]')).toEqual({ repo: "demo-org/webapp", number: 7 });
    expect(parseItemKey('["github","demo-org/webapp"]')).toEqual({ repo: "demo-org/webapp", number: null });
  });

  it("appends the cycle generation to an Event key only above zero", () => {
    expect(itemEventKey("start-dev", "Demo-Org/WebApp", 7, "abc", 0)).toBe('["start-dev","demo-org/webapp",7,"abc"]');
    expect(itemEventKey("start-dev", "demo-org/webapp", 7, "abc", 2)).toBe('["start-dev","demo-org/webapp",7,"abc",2]');
  });

  it("keys Ticks, approvals and budget resets", () => {
    expect(tickEventKey("nightly", "demo-org/api", new Date("2026-03-02T05:00:00Z"))).toBe(
      '["nightly","demo-org/api","2026-03-02T05:00:00.000Z"]',
    );
    expect(approvalEventKey("r1")).toBe('["operator-approval","r1"]');
    expect(budgetResetEventKey("ask-1")).toBe("cycle-budget-reset:ask-1");
  });

  it("derives the Run id from the dedup key (golden value)", () => {
    const id = runId('["start-dev","demo-org/webapp",7,"abc"]');
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(id).toBe("46a7f5bd2f86507d4cd0cda66cc5fdfa");
    expect(runId('["start-dev","demo-org/webapp",7,"abc"]')).toBe(id);
    expect(runId('["start-dev","demo-org/webapp",7,"abd"]')).not.toBe(id);
    expect(attemptId(id, "agent", 2)).toBe(`${id}/agent/2`);
  });
});

describe("content hash", () => {
  const a = { title: "Fix it", labels: ["a", "b"], author: { login: "octo" }, updatedAt: "2026-01-01T00:00:00Z" };
  it("ignores key order and timestamps at any depth", () => {
    const b = { author: { login: "octo" }, labels: ["a", "b"], updatedAt: "2027-01-01T00:00:00Z", title: "Fix it" };
    expect(contentHash(a)).toBe(contentHash(b));
    expect(contentHash({ x: { createdAt: 1, y: 2 } })).toBe(contentHash({ x: { y: 2 } }));
  });
  it("changes with the content", () => {
    expect(contentHash(a)).not.toBe(contentHash({ ...a, title: "Fix it!" }));
    expect(contentHash(a)).not.toBe(contentHash({ ...a, labels: ["b", "a"] }));
  });
  it("is canonical JSON hashed with SHA-256 (golden values)", () => {
    expect(canonicalJson({ b: 1, a: [true, null, "x"], closedAt: "z" })).toBe('{"a":[true,null,"x"],"b":1}');
    expect(contentHash({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  });
});
