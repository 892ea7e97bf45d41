import type { InsightsCell } from "../store/reads/insights-figures";

/**
 * The groups Insights shows — all the Runs in view, each Loop, each agent, each week — summed
 * from the roll-up's cells (one per repository, Loop, agent and week). Counts and sums add up;
 * the percentiles and the distinct merged pull requests do not, so each group gathers its Runs'
 * times and takes the percentiles exactly, and counts a pull request merged by several of its
 * Runs once (ADR 0092).
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

const TIMES = ["to_start_ms", "to_pull_request_ms", "to_merge_ms"] as const;
type Time = (typeof TIMES)[number];

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

/**
 * Puts the k-th smallest of a[lo..hi] (0-based k) at a[k], the smaller ones before it and the
 * larger ones after it (Hoare's selection, in place: linear on average, no full sort), and returns it.
 */
function select(a: Float64Array, k: number, lo: number, hi: number): number {
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k]!;
}

/**
 * Postgres's percentile_disc: the first value, in ascending order, at or past the fraction p of
 * them — the value at 1-based position ⌈p·n⌉, computed in doubles as Postgres does.
 */
const percentilePosition = (p: number, n: number): number => Math.min(Math.max(Math.ceil(p * n), 1), n) - 1;

/** The p50 and p90 of the values (reordered in place), exact: two selections, the p90 among what the p50 left above it. */
export function spreadOf(a: Float64Array): MsSpread {
  if (!a.length) return { p50: null, p90: null };
  const k50 = percentilePosition(0.5, a.length);
  const p50 = select(a, k50, 0, a.length - 1);
  return { p50, p90: select(a, percentilePosition(0.9, a.length), k50, a.length - 1) };
}

/** One group's cells, summed as they come; its times copied into arrays of their final size once all are known. */
class Tally {
  readonly sums: Sums = Object.fromEntries(SUMS.map((k) => [k, 0])) as Sums;
  readonly cells: InsightsCell[] = [];
  readonly sizes: Record<Time, number> = { to_start_ms: 0, to_pull_request_ms: 0, to_merge_ms: 0 };
  mergedRuns = 0;
  /** the merged Runs beyond the first of each pull request counted twice or more here */
  repeatedMerges = 0;

  add(c: InsightsCell): void {
    for (const k of SUMS) this.sums[k] += c[k];
    for (const t of TIMES) this.sizes[t] += c[t].length;
    this.mergedRuns += c.merged_pull_requests.length;
    this.cells.push(c);
  }

  spread(t: Time): MsSpread {
    const all = new Float64Array(this.sizes[t]);
    let at = 0;
    for (const c of this.cells) {
      all.set(c[t], at);
      at += c[t].length;
    }
    return spreadOf(all);
  }

  group(): Group {
    return {
      ...this.sums,
      merged_pull_requests: this.mergedRuns - this.repeatedMerges,
      to_start: this.spread("to_start_ms"),
      to_pull_request: this.spread("to_pull_request_ms"),
      to_merge: this.spread("to_merge_ms"),
    };
  }
}

export interface Groups {
  all: Group;
  perLoop: Map<string, Group>;
  perAgent: Map<string, Group>;
  perWeek: Map<string, Group>;
}

/**
 * A merged pull request as one number, (the repository's place among the cells') × 2³² + its
 * number: equal exactly when (repository, number) is (fewer than 2²¹ repositories in view).
 */
function pullRequestKeys(cells: InsightsCell[]): (c: InsightsCell, n: number) => number {
  const places = new Map<string, number>();
  for (const c of cells) if (!places.has(c.repositoryId)) places.set(c.repositoryId, places.size);
  return (c, n) => places.get(c.repositoryId)! * 2 ** 32 + n;
}

/**
 * Counts, in each group of `tallies`, the merged Runs whose pull request another merged Run of
 * the group had already: first the pull requests merged by more than one Run of all (most often
 * none: then no group has any), then only those, group by group.
 */
function countRepeatedMerges(cells: InsightsCell[], tallies: (c: InsightsCell) => Tally[]): void {
  const key = pullRequestKeys(cells);
  const runsOf = new Map<number, number>();
  let repeated = false;
  for (const c of cells) {
    for (const n of c.merged_pull_requests) {
      const k = key(c, n);
      const runs = (runsOf.get(k) ?? 0) + 1;
      runsOf.set(k, runs);
      repeated ||= runs > 1;
    }
  }
  if (!repeated) return;
  const seen = new Map<Tally, Set<number>>();
  for (const c of cells) {
    for (const n of c.merged_pull_requests) {
      const k = key(c, n);
      if (runsOf.get(k)! < 2) continue;
      for (const t of tallies(c)) {
        let s = seen.get(t);
        if (!s) seen.set(t, (s = new Set()));
        if (s.has(k)) t.repeatedMerges++;
        else s.add(k);
      }
    }
  }
}

export function groupsOf(cells: InsightsCell[]): Groups {
  const all = new Tally();
  const by = { loop: new Map<string, Tally>(), agent: new Map<string, Tally>(), week: new Map<string, Tally>() };
  const tallyOf = (map: Map<string, Tally>, key: string): Tally => {
    let t = map.get(key);
    if (!t) map.set(key, (t = new Tally()));
    return t;
  };
  const talliesOf = (c: InsightsCell) => [all, tallyOf(by.loop, c.loop), tallyOf(by.agent, c.agent), tallyOf(by.week, c.week)];
  for (const c of cells) for (const t of talliesOf(c)) t.add(c);
  countRepeatedMerges(cells, talliesOf);
  const groups = (map: Map<string, Tally>) => new Map([...map].map(([k, t]) => [k, t.group()]));
  return { all: all.group(), perLoop: groups(by.loop), perAgent: groups(by.agent), perWeek: groups(by.week) };
}
