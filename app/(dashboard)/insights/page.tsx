import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { formatCount, formatDurationMs, formatMinutes, formatUsd } from "../../../lib/dashboard/format";
import { INSIGHT_DEFINITIONS, type InsightTerm } from "../../../lib/dashboard/insight-definitions";
import { getInsights, OUTCOMES, type Figures, type Spread } from "../../../lib/dashboard/insights";
import { insightsQuery } from "../../../lib/dashboard/schemas";
import { FilterSelect } from "../../_components/filter-select";
import { PageHeader, Problem } from "../../_components/ui";
import { parseQuery } from "../../_server/api";
import { givenQuery, load, type SearchParams } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";
import { ColumnChart } from "../../usage/charts";
import { CountBars, OUTCOME_STYLE, OutcomeColumns } from "./charts";

export const metadata: Metadata = { title: "Insights" };
export const dynamic = "force-dynamic";

const FILTERS = ["repo", "loop", "agent", "from", "to"] as const;


const percent = (r: number | null) => (r === null ? "—" : `${(r * 100).toFixed(1).replace(/\.0$/, "")} %`);
const seconds = (s: number | null) => (s === null ? "—" : formatDurationMs(s * 1000));
const spread = (s: Spread) => `${seconds(s.p50)} / ${seconds(s.p90)}`;

/** A figure's name, linked to its definition on this page. */
function Term({ id, children }: { id: InsightTerm; children: ReactNode }) {
  return (
    <a href={`#def-${id}`} className="underline decoration-stone-300 decoration-dotted underline-offset-2 hover:decoration-stone-900">
      {children}
    </a>
  );
}

function Figure({ term, label, value, testId }: { term: InsightTerm; label: string; value: string; testId: string }) {
  return (
    <div className="rounded-lg border border-stone-200 bg-white p-3">
      <dt className="text-xs text-stone-600">
        <Term id={term}>{label}</Term>
      </dt>
      <dd className="mt-1 text-lg font-semibold tabular-nums" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

/** One row of a per-Loop or per-agent table. */
function GroupRow({ name, f }: { name: string; f: Figures }) {
  return (
    <tr data-testid="insights-group" data-name={name}>
      <td className="px-3 py-2 font-medium">{name}</td>
      <td className="px-3 py-2 text-right tabular-nums">{formatCount(f.runs)}</td>
      <td className="px-3 py-2 text-right tabular-nums">{formatCount(f.outcomes.merged)}</td>
      <td className="px-3 py-2 text-right tabular-nums">{percent(f.mergeRate)}</td>
      <td className="px-3 py-2 text-right tabular-nums">{spread(f.triggerToStart)}</td>
      <td className="px-3 py-2 text-right tabular-nums">{f.costPerMerge === null ? "—" : formatUsd(f.costPerMerge)}</td>
      <td className="px-3 py-2 text-right tabular-nums">{formatCount(f.outcomes.failed)}</td>
    </tr>
  );
}

function GroupTable({ title, rows, testId }: { title: string; rows: { name: string; f: Figures }[]; testId: string }) {
  return (
    <section className="mt-6">
      <h2 className="mb-2 text-base font-semibold">{title}</h2>
      <div className="overflow-x-auto rounded-lg border border-stone-200 bg-white">
        <table data-testid={testId} className="w-full min-w-[40rem] text-left text-sm">
          <thead className="border-b border-stone-200 text-xs text-stone-600">
            <tr>
              <th className="px-3 py-2 font-medium">Name</th>
              <th className="px-3 py-2 text-right font-medium">Runs</th>
              <th className="px-3 py-2 text-right font-medium">Merged</th>
              <th className="px-3 py-2 text-right font-medium">
                <Term id="merge-rate">Merge rate</Term>
              </th>
              <th className="px-3 py-2 text-right font-medium">
                <Term id="trigger-to-start">Trigger → start</Term> p50 / p90
              </th>
              <th className="px-3 py-2 text-right font-medium">
                <Term id="cost-per-merge">Cost per merge</Term>
              </th>
              <th className="px-3 py-2 text-right font-medium">Failed</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-stone-100">
            {rows.map((r) => (
              <GroupRow key={r.name} name={r.name} f={r.f} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export default async function InsightsPage({ searchParams }: { searchParams: SearchParams }) {
  const sp = givenQuery(await searchParams);
  const search = new URLSearchParams(sp).toString();
  const viewer = await requirePageViewer(`/insights${search ? `?${search}` : ""}`);
  const parsed = parseQuery(sp, insightsQuery);
  const result = parsed.ok ? await load(() => getInsights(dashboardContext(), viewer, parsed.data)) : null;
  if (!parsed.ok || !result?.ok) {
    const problem = !parsed.ok ? { message: parsed.error.message, token: parsed.error.token } : result && !result.ok ? result : { message: "", token: "" };
    return (
      <>
        <PageHeader title="Insights" />
        <Problem title="Insights could not be read" message={problem.message} token={problem.token} />
        <p className="mt-3 text-sm">
          <Link href="/insights" className="underline">
            The last 12 weeks
          </Link>
        </p>
      </>
    );
  }
  const r = result.data;
  const t = r.totals;
  const q = parsed.data;
  const filtered = FILTERS.some((k) => q[k]);

  return (
    <>
      <PageHeader title="Insights" subtitle={`What became of ${formatCount(t.runs)} Runs received from ${r.filter.from} to ${r.filter.to} (UTC), in ${r.repos.length} repositor${r.repos.length === 1 ? "y" : "ies"}`} />
      <form method="get" action="/insights" role="search" aria-label="Filter Insights" className="mb-4 flex flex-wrap items-end gap-2 text-sm">
        <FilterSelect name="repo" label="Repository" all="All repositories" value={q.repo} options={r.repos} />
        <FilterSelect name="loop" label="Loop" all="All Loops" value={q.loop} options={r.loops} />
        <FilterSelect name="agent" label="Agent" all="All agents" value={q.agent} options={r.agents} />
        <label className="flex flex-col gap-0.5">
          <span className="text-xs text-stone-600">From</span>
          <input type="date" name="from" defaultValue={r.filter.from} className="rounded border border-stone-300 bg-white px-2 py-1" />
        </label>
        <label className="flex flex-col gap-0.5">
          <span className="text-xs text-stone-600">To</span>
          <input type="date" name="to" defaultValue={r.filter.to} className="rounded border border-stone-300 bg-white px-2 py-1" />
        </label>
        <button type="submit" className="rounded-md bg-stone-800 px-3 py-1.5 font-medium text-white">
          Show
        </button>
        {filtered ? (
          <Link href="/insights" className="px-1 py-1.5 text-stone-700 underline">
            Clear
          </Link>
        ) : null}
      </form>

      <dl className="grid grid-cols-2 gap-3 md:grid-cols-4" data-testid="insights-figures">
        <Figure term="merge-rate" label="Merge rate" value={percent(t.mergeRate)} testId="insights-merge-rate" />
        <Figure term="trigger-to-start" label="Trigger → agent start, p50 / p90" value={spread(t.triggerToStart)} testId="insights-to-start" />
        <Figure term="trigger-to-pull-request" label="Trigger → pull request, p50 / p90" value={spread(t.triggerToPullRequest)} testId="insights-to-pull-request" />
        <Figure term="trigger-to-merge" label="Trigger → merge, p50 / p90" value={spread(t.triggerToMerge)} testId="insights-to-merge" />
        <Figure term="cost-per-merge" label="Cost per merged pull request" value={t.costPerMerge === null ? "—" : formatUsd(t.costPerMerge)} testId="insights-cost-per-merge" />
        <Figure
          term="minutes-per-merge"
          label="Agent time per merged pull request"
          value={t.agentMinutesPerMerge === null ? "—" : formatMinutes(t.agentMinutesPerMerge)}
          testId="insights-minutes-per-merge"
        />
        <Figure term="attempts-per-success" label="Attempts per success" value={t.attemptsPerSuccess === null ? "—" : String(t.attemptsPerSuccess)} testId="insights-attempts-per-success" />
        <Figure
          term="verify-pass-rate"
          label="Verify pass rate"
          value={t.verify.checked ? `${percent(t.verify.rate)} of ${formatCount(t.verify.checked)}` : "—"}
          testId="insights-verify"
        />
      </dl>

      <section className="mt-6">
        <h2 className="mb-2 text-base font-semibold">
          Runs by <Term id="outcome">outcome</Term>
        </h2>
        <ul className="mb-3 flex flex-wrap gap-2 text-sm" data-testid="insights-outcomes">
          {OUTCOMES.filter((o) => o !== "in_progress" || t.outcomes.in_progress > 0).map((o) => (
            <li key={o} data-testid="insights-outcome" data-outcome={o} data-value={t.outcomes[o]} className="rounded-md border border-stone-200 bg-white px-2 py-1">
              <span className="mr-1 inline-block h-2.5 w-2.5 rounded-sm align-middle" style={{ background: OUTCOME_STYLE[o].color }} aria-hidden="true" />
              {OUTCOME_STYLE[o].label}: <span className="font-semibold tabular-nums">{formatCount(t.outcomes[o])}</span>
            </li>
          ))}
        </ul>
        <OutcomeColumns
          title="Runs by outcome, per week"
          testId="insights-weekly-outcomes"
          columns={r.weeks.map((w) => ({ label: w.week, parts: OUTCOMES.map((o) => ({ outcome: o, value: w.outcomes[o] })) }))}
        />
        <div className="mt-3 grid gap-3 md:grid-cols-3">
          <ColumnChart
            title="Merge rate, per week"
            testId="insights-weekly-merge-rate"
            points={r.weeks.map((w) => ({ label: w.week, value: w.mergeRate ?? 0 }))}
            format={(n) => `${Math.round(n * 100)} %`}
          />
          <ColumnChart
            title="Trigger → agent start p50, per week"
            testId="insights-weekly-to-start"
            color="#0369a1"
            points={r.weeks.map((w) => ({ label: w.week, value: w.triggerToStart.p50 ?? 0 }))}
            format={(n) => seconds(n)}
          />
          <CountBars title="Failed Attempts by category" testId="insights-failures" rows={r.failures.map((f) => ({ name: f.category, value: f.attempts }))} />
        </div>
      </section>

      <GroupTable title="Per Loop" testId="insights-per-loop" rows={r.perLoop.map((l) => ({ name: l.loop, f: l }))} />
      <GroupTable title="Per agent" testId="insights-per-agent" rows={r.perAgent.map((a) => ({ name: a.agent, f: a }))} />

      <section className="mt-8" aria-labelledby="definitions">
        <h2 id="definitions" className="mb-2 text-base font-semibold">
          Definitions
        </h2>
        <dl className="grid gap-2 text-sm md:grid-cols-2">
          {INSIGHT_DEFINITIONS.map((d) => (
            <div key={d.id} id={`def-${d.id}`} className="rounded-md border border-stone-200 bg-white p-2 target:border-amber-500 target:bg-amber-50">
              <dt className="font-medium">{d.term}</dt>
              <dd className="text-stone-700">{d.text}</dd>
            </div>
          ))}
        </dl>
        <p className="mt-2 text-xs text-stone-500">
          The same figures: <code>GET /api/v1/insights</code>; as Prometheus metrics: <code>atelier_run_outcomes_total</code>, <code>atelier_run_trigger_to_start_seconds</code>,{" "}
          <code>atelier_run_trigger_to_merge_seconds</code>.
        </p>
      </section>
    </>
  );
}
