import { requireViewer } from "../auth/authorize";
import { instanceConfig } from "../auth/instance-config";
import type { Viewer } from "../auth/viewer";
import { narrow, scopeRepos } from "../auth/viewer-scope";
import { BadInputError } from "../errors";
import type { Db } from "../store/kernel/db";
import { loopNamesOf } from "../store/reads/filter-choices";
import { readInsightsFigures } from "../store/reads/insights-figures";
import { groupsOf, type Group, type MsSpread } from "./insights-groups";

/**
 * Insights: what became of the Runs the viewer may see, received in a time range, filtered as
 * the Runs list is (repository, Loop, agent). Each figure is defined in docs/insights.md; the
 * page links every one to its definition. They are read from the roll-up the Runs keep
 * (lib/store/reads/insights-figures.ts, ADR 0092) and grouped here (insights-groups.ts).
 */

export const OUTCOMES = ["merged", "closed", "open", "no_pull_request", "failed", "canceled", "in_progress"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The p50 and p90 of a duration, in seconds; null when no Run had it. */
export interface Spread {
  p50: number | null;
  p90: number | null;
}

export interface Figures {
  runs: number;
  outcomes: Record<Outcome, number>;
  /** merged ÷ Runs with a pull request (merged, closed or open); null without one */
  mergeRate: number | null;
  triggerToStart: Spread;
  triggerToPullRequest: Spread;
  triggerToMerge: Spread;
  /** distinct pull requests merged (several Runs may have worked on one) */
  mergedPullRequests: number;
  /** every Attempt's cost (USD) ÷ merged pull requests; null when none merged */
  costPerMerge: number | null;
  /** every Attempt's agent minutes ÷ merged pull requests; null when none merged */
  agentMinutesPerMerge: number | null;
  /** Attempts of the Succeeded Runs ÷ Succeeded Runs; null when none succeeded */
  attemptsPerSuccess: number | null;
  /** Attempts whose commit verify checked, and how many passed */
  verify: { checked: number; passed: number; rate: number | null };
}

export interface Insights {
  filter: { repo: string | null; loop: string | null; agent: string | null; from: string; to: string };
  /** the filters' choices */
  repos: string[];
  loops: string[];
  agents: string[];
  totals: Figures;
  perLoop: (Figures & { loop: string })[];
  perAgent: (Figures & { agent: string })[];
  /** every week of the range (its Monday, UTC), oldest first, empty weeks included */
  weeks: (Figures & { week: string })[];
  failures: { category: string; attempts: number }[];
}

export interface InsightsQuery {
  repo?: string;
  loop?: string;
  agent?: string;
  /** first day, YYYY-MM-DD (UTC); default: the Monday eleven weeks before this week's */
  from?: string;
  /** last day, YYYY-MM-DD (UTC), included; default: today */
  to?: string;
}

const DAY_MS = 86_400_000;
const DEFAULT_WEEKS = 12;
const MAX_RANGE_DAYS = 366;

const dayOf = (d: Date): string => d.toISOString().slice(0, 10);
const mondayOf = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - ((d.getUTCDay() + 6) % 7) * DAY_MS);

function parseDay(text: string, field: string): Date {
  const ms = Date.parse(`${text}T00:00:00Z`);
  if (!/^\d{4}-\d\d-\d\d$/.test(text) || Number.isNaN(ms) || dayOf(new Date(ms)) !== text) {
    throw new BadInputError("invalid_insights_range", `${field} must be a day as YYYY-MM-DD.`);
  }
  return new Date(ms);
}

/** The range's first instant and the instant after its last day; a bad or too long range is a 400 `invalid_insights_range`. */
export function insightsRange(q: Pick<InsightsQuery, "from" | "to">, now: Date = new Date()): { from: Date; to: Date } {
  const lastDay = q.to ? parseDay(q.to, "to") : parseDay(dayOf(now), "to");
  const from = q.from ? parseDay(q.from, "from") : new Date(mondayOf(lastDay).getTime() - (DEFAULT_WEEKS - 1) * 7 * DAY_MS);
  const to = new Date(lastDay.getTime() + DAY_MS);
  if (from >= to) throw new BadInputError("invalid_insights_range", "from must be on or before to.");
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    throw new BadInputError("invalid_insights_range", `A range is at most ${MAX_RANGE_DAYS} days: narrow from and to.`);
  }
  return { from, to };
}

const ratio = (num: number, den: number, digits: number): number | null => (den > 0 ? Number((num / den).toFixed(digits)) : null);

const seconds = (s: MsSpread): Spread => ({ p50: s.p50 === null ? null : s.p50 / 1000, p90: s.p90 === null ? null : s.p90 / 1000 });

/** A group's figures from its sums, times and pull requests. */
function figuresOf(g: Group): Figures {
  const decided = g.merged + g.closed + g.open;
  const cost = g.cost_micro_usd / 1_000_000;
  const minutes = g.agent_ms / 60_000;
  return {
    runs: g.runs,
    outcomes: {
      merged: g.merged,
      closed: g.closed,
      open: g.open,
      no_pull_request: g.no_pull_request,
      failed: g.failed,
      canceled: g.canceled,
      in_progress: g.in_progress,
    },
    mergeRate: ratio(g.merged, decided, 4),
    triggerToStart: seconds(g.to_start),
    triggerToPullRequest: seconds(g.to_pull_request),
    triggerToMerge: seconds(g.to_merge),
    mergedPullRequests: g.merged_pull_requests,
    costPerMerge: ratio(cost, g.merged_pull_requests, 6),
    agentMinutesPerMerge: ratio(minutes, g.merged_pull_requests, 3),
    attemptsPerSuccess: ratio(g.succeeded_attempts, g.succeeded, 3),
    verify: { checked: g.verified, passed: g.verify_passed, rate: ratio(g.verify_passed, g.verified, 4) },
  };
}

const NO_GROUP = groupsOf([]).all;

/** Every Monday from the range's first week to its last. */
function weeksOf(from: Date, to: Date): string[] {
  const weeks: string[] = [];
  for (let t = mondayOf(from).getTime(); t < to.getTime(); t += 7 * DAY_MS) weeks.push(dayOf(new Date(t)));
  return weeks;
}

/** Insights of `repos` (already the viewer's scope), as filtered. */
export async function loadInsights(db: Db, repos: string[], q: { loop: string | null; agent: string | null; from: Date; to: Date }) {
  const read = repos.length ? await readInsightsFigures(db, { repos, ...q }) : { cells: [], failures: [] };
  const groups = groupsOf(read.cells);
  const named = (map: Map<string, Group>) => [...map].sort(([a, ga], [b, gb]) => gb.runs - ga.runs || a.localeCompare(b));
  return {
    totals: figuresOf(groups.all),
    perLoop: named(groups.perLoop).map(([loop, g]) => ({ loop, ...figuresOf(g) })),
    perAgent: named(groups.perAgent).map(([agent, g]) => ({ agent, ...figuresOf(g) })),
    weeks: weeksOf(q.from, q.to).map((week) => ({ week, ...figuresOf(groups.perWeek.get(week) ?? NO_GROUP) })),
    failures: read.failures,
  };
}

/** Insights as the viewer may see them: only the repositories in their scope count. */
export async function getInsights(ctx: { db: Db }, viewer: Viewer | null, q: InsightsQuery = {}, now: Date = new Date()): Promise<Insights> {
  const who = requireViewer(viewer);
  const range = insightsRange(q, now);
  const [scope, config] = await Promise.all([scopeRepos(ctx.db, who), instanceConfig()]);
  const repos = narrow(scope, q.repo);
  const filter = { loop: q.loop ?? null, agent: q.agent ?? null };
  const [figures, loops] = await Promise.all([loadInsights(ctx.db, repos, { ...filter, ...range }), loopNamesOf(ctx.db, scope)]);
  return {
    filter: { repo: q.repo ?? null, ...filter, from: dayOf(range.from), to: dayOf(new Date(range.to.getTime() - DAY_MS)) },
    repos: scope,
    loops,
    agents: Object.keys(config.agents).sort(),
    ...figures,
  };
}
