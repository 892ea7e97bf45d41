import { describe, expect, it } from "vitest";
import { groupsOf, spreadOf } from "../../lib/dashboard/insights-groups";
import type { InsightsCell } from "../../lib/store/reads/insights-figures";

/** Postgres's percentile_disc, by a full sort: the value at 1-based position ⌈p·n⌉. */
const bySort = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.max(Math.ceil(p * values.length), 1) - 1];

const cell = (c: Partial<InsightsCell> & Pick<InsightsCell, "repositoryId" | "loop" | "agent" | "week">): InsightsCell => ({
  runs: 0, merged: 0, closed: 0, open: 0, no_pull_request: 0, failed: 0, canceled: 0, in_progress: 0, succeeded: 0, succeeded_attempts: 0,
  cost_micro_usd: 0, agent_ms: 0, verified: 0, verify_passed: 0,
  to_start_ms: new Float64Array(0), to_pull_request_ms: new Float64Array(0), to_merge_ms: new Float64Array(0), merged_pull_requests: new Float64Array(0),
  ...c,
});

describe("Insights' groups", () => {
  it("take the p50 and p90 by selection exactly as percentile_disc does by sorting, repeated values and all", () => {
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (const n of [1, 2, 3, 10, 30, 101, 1000, 4099]) {
      for (const spreadValues of [5, 1000, 1e9]) {
        const values = Array.from({ length: n }, () => Math.floor(random() * spreadValues) - 2);
        expect(spreadOf(Float64Array.from(values))).toEqual({ p50: bySort(values, 0.5), p90: bySort(values, 0.9) });
        const sorted = [...values].sort((a, b) => a - b);
        expect(spreadOf(Float64Array.from(sorted))).toEqual({ p50: bySort(values, 0.5), p90: bySort(values, 0.9) });
        expect(spreadOf(Float64Array.from(sorted.reverse()))).toEqual({ p50: bySort(values, 0.5), p90: bySort(values, 0.9) });
      }
    }
    expect(spreadOf(new Float64Array(0))).toEqual({ p50: null, p90: null });
  });

  it("count a pull request merged by several Runs once in every group that holds them, and the same number of two repositories twice", () => {
    const prs = (...n: number[]) => Float64Array.from(n);
    const g = groupsOf([
      cell({ repositoryId: "1", loop: "a", agent: "x", week: "w1", merged: 2, merged_pull_requests: prs(7, 8) }),
      cell({ repositoryId: "1", loop: "b", agent: "x", week: "w2", merged: 2, merged_pull_requests: prs(7, 7) }),
      cell({ repositoryId: "2", loop: "a", agent: "y", week: "w2", merged: 1, merged_pull_requests: prs(7) }),
    ]);
    expect(g.all).toMatchObject({ merged: 5, merged_pull_requests: 3 }); // 1#7 1#8 2#7
    expect([...g.perLoop].map(([k, v]) => [k, v.merged_pull_requests])).toEqual([["a", 3], ["b", 1]]);
    expect([...g.perAgent].map(([k, v]) => [k, v.merged_pull_requests])).toEqual([["x", 2], ["y", 1]]);
    expect([...g.perWeek].map(([k, v]) => [k, v.merged_pull_requests])).toEqual([["w1", 2], ["w2", 2]]);
  });
});
