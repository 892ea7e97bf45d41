import type { Metadata } from "next";
import Link from "next/link";
import { RUN_STATES } from "../../../lib/engine/run-state";
import { getRuns } from "../../../lib/dashboard/queries";
import { runsQuery } from "../../../lib/dashboard/schemas";
import { FilterSelect } from "../../_components/filter-select";
import { LiveRefresh } from "../../_components/live-refresh";
import { Empty, PageHeader, Problem, StateBadge, Time } from "../../_components/ui";
import { parseQuery } from "../../_server/api";
import { givenQuery, load, type SearchParams } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Runs" };

const FILTERS = ["repo", "loop", "agent", "state", "q"] as const;


export default async function RunsPage({ searchParams }: { searchParams: SearchParams }) {
  const sp = givenQuery(await searchParams);
  const search = new URLSearchParams(sp).toString();
  const viewer = await requirePageViewer(`/runs${search ? `?${search}` : ""}`);
  const parsed = parseQuery(sp, runsQuery);
  if (!parsed.ok) {
    return (
      <>
        <PageHeader title="Runs" />
        <Problem title="These filters are not valid" message={parsed.error.message} token={parsed.error.token} />
        <p className="mt-3 text-sm">
          <Link href="/runs" className="underline">
            All Runs
          </Link>
        </p>
      </>
    );
  }
  const q = parsed.data;
  const result = await load(() => getRuns(dashboardContext(), viewer, q));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Runs" />
        <Problem title="The Runs could not be read" message={result.message} token={result.token} />
        <p className="mt-3 text-sm">
          <Link href="/runs" className="underline">
            All Runs
          </Link>
        </p>
      </>
    );
  }
  const { runs, next, repos, loops, agents } = result.data;
  const filters = Object.fromEntries(FILTERS.flatMap((k) => (q[k] ? [[k, String(q[k])]] : []))) as Record<string, string>;
  const filtered = Object.keys(filters).length > 0;
  const pageLink = (cursor: string | null) => `/runs?${new URLSearchParams({ ...filters, ...(cursor ? { cursor } : {}) })}`;

  return (
    <>
      <PageHeader title="Runs" subtitle={`Newest first, ${runs.length} on this page${q.cursor ? " (not the first)" : ""}, in ${repos.length} repositor${repos.length === 1 ? "y" : "ies"}`}>
        <LiveRefresh />
      </PageHeader>
      <form method="get" action="/runs" role="search" aria-label="Filter the Runs" className="mb-4 flex flex-wrap items-end gap-2 text-sm">
        <FilterSelect name="repo" label="Repository" all="All repositories" value={q.repo} options={repos} />
        <FilterSelect name="loop" label="Loop" all="All Loops" value={q.loop} options={loops} />
        <FilterSelect name="agent" label="Agent" all="All agents" value={q.agent} options={agents} />
        <FilterSelect name="state" label="State" all="All states" value={q.state} options={RUN_STATES} />
        <label className="flex flex-col gap-0.5">
          <span className="text-xs text-stone-600">Search</span>
          <input
            type="search"
            name="q"
            defaultValue={q.q ?? ""}
            placeholder="Item title, #number or Run id"
            maxLength={200}
            className="w-64 rounded border border-stone-300 bg-white px-2 py-1"
          />
        </label>
        <button type="submit" className="rounded-md bg-stone-800 px-3 py-1.5 font-medium text-white">
          Filter
        </button>
        {filtered ? (
          <Link href="/runs" className="px-1 py-1.5 text-stone-700 underline">
            Clear
          </Link>
        ) : null}
      </form>

      {runs.length === 0 ? (
        <Empty title={filtered ? "No Run matches these filters" : q.cursor ? "No more Runs" : "No Run yet"}>
          {filtered ? "Clear a filter, or search for something else." : "A Run opens when a Loop of a repository matches an issue or pull request."}
        </Empty>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-stone-200 bg-white">
          <table data-testid="runs" className="w-full min-w-[44rem] text-left text-sm">
            <caption className="sr-only">Runs, newest first</caption>
            <thead className="border-b border-stone-200 text-xs text-stone-600">
              <tr>
                <th className="px-3 py-2 font-medium">State</th>
                <th className="px-3 py-2 font-medium">Item</th>
                <th className="px-3 py-2 font-medium">Loop</th>
                <th className="px-3 py-2 font-medium">Agent</th>
                <th className="px-3 py-2 font-medium">Received</th>
                <th className="px-3 py-2 font-medium">Run</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-stone-100">
              {runs.map((r) => (
                <tr key={r.id} data-testid="run-row" data-run={r.id} data-state={r.state}>
                  <td className="px-3 py-2">
                    <StateBadge state={r.state} />
                  </td>
                  <td className="max-w-[24rem] px-3 py-2">
                    <Link href={`/runs/${r.id}`} className="font-medium text-stone-900 underline decoration-stone-300 hover:decoration-stone-900">
                      {r.title ?? (r.number ? `#${r.number}` : "a scheduled Run")}
                    </Link>
                    <span className="block text-xs text-stone-600">
                      {r.repo}
                      {r.number ? `#${r.number}` : ""}
                      {r.pullRequestNumber ? ` · pull request #${r.pullRequestNumber}` : ""}
                    </span>
                  </td>
                  <td className="px-3 py-2">{r.loop}</td>
                  <td className="px-3 py-2">{r.agent}</td>
                  <td className="px-3 py-2">
                    <Time iso={r.receivedAt} />
                  </td>
                  <td className="px-3 py-2 font-mono text-xs text-stone-600">{r.id.slice(0, 8)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Pages" className="mt-3 flex gap-4 text-sm">
        {q.cursor ? (
          <Link href={pageLink(null)} className="underline" data-testid="runs-first">
            ← Newest
          </Link>
        ) : null}
        {next ? (
          <Link href={pageLink(next)} className="underline" data-testid="runs-next">
            Older →
          </Link>
        ) : null}
      </nav>
    </>
  );
}
