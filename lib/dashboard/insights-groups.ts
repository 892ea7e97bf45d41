import type { InsightsCell } from "../store/reads/insights-figures";

/**
 * The groups Insights shows — all the Runs in view, each Loop, each agent, each week — summed
 * from the roll-up's cells (one per repository, Loop, agent and week). Counts and sums add up;
 * the percentiles and the distinct merged pull requests do not, so each group gathers its Runs'
 * times and pull requests and takes them exactly (ADR 0092).
 */

const SUMS = [
  "runs",
  "merged",
  "closed",
  "open",
  "no_pull_request",
  "failed",
  "canceled",
  "in_progress",
  "succeeded",
  "succeeded_attempts",
  "cost_micro_usd",
  "agent_ms",
  "verified",
  "verify_passed",
] as const;

export type Sums = Record<(typeof SUMS)[number], number>;

/** The p50 and p90 of a time, in milliseconds; null when no Run in the group had it. */
export interface MsSpread {
  p50: number | null;
  p90: number | null;
}

export interface Group extends Sums {
  /** distinct (repository, number) among the merged Runs */
  merged_pull_requests: number;
  to_start: MsSpread;
  to_pull_request: MsSpread;
  to_merge: MsSpread;
}

class Tally {
  readonly sums: Sums = Object.fromEntries(SUMS.map((k) => [k, 0])) as Sums;
  readonly toStart: number[] = [];
  readonly toPullRequest: number[] = [];
  readonly toMerge: number[] = [];
  readonly mergedPullRequests = new Set<string>();

  add(c: InsightsCell): void {
    for (const k of SUMS) this.sums[k] += c[k];
    for (const ms of c.to_start_ms) this.toStart.push(ms);
    for (const ms of c.to_pull_request_ms) this.toPullRequest.push(ms);
    for (const ms of c.to_merge_ms) this.toMerge.push(ms);
    for (const n of c.merged_pull_requests) this.mergedPullRequests.add(`${c.repositoryId}#${n}`);
  }

  group(): Group {
    return {
      ...this.sums,
      merged_pull_requests: this.mergedPullRequests.size,
      to_start: spread(this.toStart),
      to_pull_request: spread(this.toPullRequest),
      to_merge: spread(this.toMerge),
    };
  }
}

/**
 * Postgres's percentile_disc: the first value, in ascending order, at or past the fraction p of
 * them (the value at 1-based position ⌈p·n⌉, computed in doubles as Postgres does).
 */
export function percentileDisc(sorted: Float64Array, p: number): number | null {
  if (!sorted.length) return null;
  const position = Math.ceil(p * sorted.length);
  return sorted[Math.min(Math.max(position, 1), sorted.length) - 1]!;
}

function spread(values: number[]): MsSpread {
  const sorted = Float64Array.from(values).sort();
  return { p50: percentileDisc(sorted, 0.5), p90: percentileDisc(sorted, 0.9) };
}

export interface Groups {
  all: Group;
  perLoop: Map<string, Group>;
  perAgent: Map<string, Group>;
  perWeek: Map<string, Group>;
}

export function groupsOf(cells: InsightsCell[]): Groups {
  const all = new Tally();
  const by = { loop: new Map<string, Tally>(), agent: new Map<string, Tally>(), week: new Map<string, Tally>() };
  const tallyOf = (map: Map<string, Tally>, key: string): Tally => {
    let t = map.get(key);
    if (!t) map.set(key, (t = new Tally()));
    return t;
  };
  for (const c of cells) {
    all.add(c);
    tallyOf(by.loop, c.loop).add(c);
    tallyOf(by.agent, c.agent).add(c);
    tallyOf(by.week, c.week).add(c);
  }
  const groups = (map: Map<string, Tally>) => new Map([...map].map(([k, t]) => [k, t.group()]));
  return { all: all.group(), perLoop: groups(by.loop), perAgent: groups(by.agent), perWeek: groups(by.week) };
}
