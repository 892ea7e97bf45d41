import type { Metadata } from "next";
import Link from "next/link";
import { counted, formatCount, formatMinutes, formatUsd } from "../../lib/dashboard/format";
import { monthKey, parseMonthKey } from "../../lib/metering/month";
import type { CapStatus, UsageTotals } from "../../lib/metering/usage-report";
import { narrow, scopeRepos } from "../../lib/auth/viewer-scope";
import { usageForViewer, usageQuery } from "../../lib/metering/usage-for-viewer";
import { Empty, PageHeader, Problem } from "../_components/ui";
import { db } from "../_server/db";
import { load } from "../_server/page-data";
import { requirePageViewer } from "../_server/viewer";
import { ColumnChart, Meter } from "./charts";
import { QuotaForm, type QuotaValues } from "./quota-form";
import { prunedReportFor, type PrunedReport } from "../../lib/retention/pruned-report";
import type { PrunedSummary } from "../../lib/store/retention/prune-batches";

export const metadata: Metadata = { title: "Usage" };
export const dynamic = "force-dynamic";

type Search = Promise<Record<string, string | string[] | undefined>>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) || undefined;


function shiftMonth(key: string, by: number): string {
  const start = parseMonthKey(key)!;
  return monthKey(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + by, 1)));
}

const LIMITS: { key: CapStatus["limit"]; label: string; format: (n: number) => string }[] = [
  { key: "monthly_runs", label: "Runs opened this month", format: formatCount },
  { key: "monthly_cost_usd", label: "Cost this month", format: formatUsd },
  { key: "max_concurrent", label: "Runs running now", format: formatCount },
  { key: "open_rate_per_minute", label: "Runs opened in the last minute", format: (n) => formatCount(Math.round(n * 10) / 10) },
];

export default async function UsagePage({ searchParams }: { searchParams: Search }) {
  const sp = await searchParams;
  const parsed = usageQuery.safeParse({ month: one(sp.month), repo: one(sp.repo) });
  const q = parsed.success ? parsed.data : {};
  const viewer = await requirePageViewer(`/usage${q.month || q.repo ? `?${new URLSearchParams(Object.entries(q) as [string, string][])}` : ""}`);
  const result = await load(() => usageForViewer(db(), viewer, { scopeRepos, narrow }, q));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Usage" />
        <Problem title="Usage could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const r = result.data;
  const retention = await load(() => prunedReportFor(db(), viewer));
  const link = (month: string) => `/usage?${new URLSearchParams({ month, ...(q.repo ? { repo: q.repo } : {}) })}`;
  const owners = groupCaps(r.caps);

  return (
    <>
      <PageHeader
        title="Usage"
        subtitle={`${r.month} (UTC) · the monthly counters reset on ${r.to.toISOString().slice(0, 10)} at 00:00 UTC.`}
      >
        <nav aria-label="Month" className="flex items-center gap-2 text-sm">
          <Link href={link(shiftMonth(r.month, -1))} className="rounded px-2 py-1 hover:bg-stone-200" data-testid="usage-prev">
            ← {shiftMonth(r.month, -1)}
          </Link>
          <span className="font-medium" data-testid="usage-month">
            {r.month}
          </span>
          <Link href={link(shiftMonth(r.month, 1))} className="rounded px-2 py-1 hover:bg-stone-200">
            {shiftMonth(r.month, 1)} →
          </Link>
        </nav>
      </PageHeader>

      <section aria-label="Totals" className="mb-4 grid grid-cols-2 gap-2 sm:grid-cols-4">
        <Stat label="Cost" value={formatUsd(r.totals.costUsd)} note={r.totals.estimatedCostUsd > 0 ? `${formatUsd(r.totals.estimatedCostUsd)} of it estimated` : "as the agents reported it"} testId="usage-total-cost" />
        <Stat label="Agent time" value={formatMinutes(r.totals.minutes)} note={`over ${counted(r.totals.attempts, "finished Attempt")}`} testId="usage-total-minutes" />
        <Stat label="Runs with a finished Attempt" value={formatCount(r.totals.runs)} note="counted on the day their Attempt ended" testId="usage-total-runs" />
        <Stat label="Tokens" value={`${formatCount(r.totals.tokensIn)} in`} note={`${formatCount(r.totals.tokensOut)} out`} testId="usage-total-tokens" />
      </section>

      <section aria-label="Per day" className="mb-6 grid gap-3 lg:grid-cols-3">
        <ColumnChart title="Cost per day" testId="usage-chart-cost" format={formatUsd} points={r.days.map((d) => ({ label: d.day, value: d.costUsd }))} />
        <ColumnChart title="Agent time per day" testId="usage-chart-minutes" color="#0369a1" format={formatMinutes} points={r.days.map((d) => ({ label: d.day, value: d.minutes }))} />
        <ColumnChart title="Runs with a finished Attempt, per day" testId="usage-chart-runs" color="#7c3aed" format={formatCount} points={r.days.map((d) => ({ label: d.day, value: d.runs }))} />
      </section>

      {r.totals.attempts === 0 ? (
        <Empty title="No Attempt finished this month">Cost, agent time and Runs appear here as Attempts finish.</Empty>
      ) : (
        <section aria-label="Breakdown" className="mb-6 grid gap-3 lg:grid-cols-2 2xl:grid-cols-3">
          <Breakdown title="Per repository" testId="usage-by-repo" total={r.totals} rows={r.byRepository.map((x) => ({ key: x.repo, label: x.repo, ...x }))} />
          <Breakdown title="Per Loop" testId="usage-by-loop" total={r.totals} rows={r.byLoop.map((x) => ({ key: `${x.repo}\u0000${x.loop}`, label: `${x.loop} · ${x.repo}`, ...x }))} />
          <Breakdown title="Per agent" testId="usage-by-agent" total={r.totals} rows={r.byAgent.map((x) => ({ key: x.agent, label: x.agent, ...x }))} />
        </section>
      )}

      <section aria-label="Limits">
        <h2 className="mb-2 text-base font-semibold">Limits</h2>
        {owners.length === 0 ? (
          <Empty title="No installation in view">Limits show for the installations and repositories you can see.</Empty>
        ) : (
          <div className="space-y-3">
            {owners.map((o) => (
              <div key={o.key} data-testid="cap-owner" data-scope={o.scope} data-name={o.name} className="rounded-lg border border-stone-200 bg-white p-3">
                <div className="mb-2 flex flex-wrap items-center gap-2 text-sm">
                  <span className="rounded bg-stone-100 px-1.5 py-0.5 text-xs text-stone-600">{o.scope}</span>
                  <span className="font-medium">{o.name}</span>
                  {o.suspended ? <span className="rounded bg-red-100 px-1.5 py-0.5 text-xs font-medium text-red-900">suspended</span> : null}
                </div>
                <dl className="grid grid-cols-1 gap-2 sm:grid-cols-2 lg:grid-cols-4">
                  {LIMITS.map((l) => {
                    const c = o.caps.get(l.key)!;
                    return (
                      <div key={l.key} data-testid="cap" data-limit={l.key} data-nearness={c.nearness ?? ""} className="text-sm">
                        <dt className="text-xs text-stone-500">{l.label}</dt>
                        <dd className="flex items-center gap-2">
                          <span>
                            {l.format(c.used)}
                            <span className="text-stone-500"> / {c.value > 0 ? l.format(c.value) : "unlimited"}</span>
                          </span>
                          <Meter ratio={c.nearness} label={`${l.label}: ${c.nearness === null ? "unlimited" : `${Math.round(c.nearness * 100)}% of the limit`}`} />
                        </dd>
                      </div>
                    );
                  })}
                </dl>
                {r.canEditQuotas ? (
                  <details className="mt-3">
                    <summary className="cursor-pointer text-sm text-emerald-800">Change the limits</summary>
                    <div className="mt-2">
                      <QuotaForm url={o.url} values={o.values} testId="quota-form" />
                    </div>
                  </details>
                ) : null}
              </div>
            ))}
          </div>
        )}
      </section>

      {retention.ok && retention.data ? <RetentionSection report={retention.data} /> : null}
    </>
  );
}

const PRUNED_LABEL: Record<PrunedSummary["kind"], { what: string; days: keyof PrunedReport["days"] }> = {
  transcripts: { what: "Attempts' transcripts cut to their summary and last lines", days: "transcripts" },
  event_payloads: { what: "Event payloads shed (their keys kept)", days: "eventPayloads" },
  audit: { what: "Audit rows deleted", days: "audit" },
  deliveries: { what: "Delivery log rows deleted", days: "deliveries" },
};

/** What retention keeps and what it pruned (instance admins only: the counts span every installation). */
function RetentionSection({ report }: { report: PrunedReport }) {
  return (
    <section aria-label="Retention" className="mt-6" data-testid="usage-retention">
      <h2 className="mb-2 text-base font-semibold">Retention</h2>
      <ul className="space-y-1 text-sm">
        {(Object.keys(PRUNED_LABEL) as PrunedSummary["kind"][]).map((kind) => {
          const found = report.pruned.find((p) => p.kind === kind);
          const { what, days } = PRUNED_LABEL[kind];
          return (
            <li key={kind} data-testid="retention-kind" data-kind={kind} data-total={found?.total ?? 0}>
              <span className="font-medium">{what}</span> after {counted(report.days[days], "day")}:{" "}
              {found?.lastAt ? (
                <>
                  {formatCount(found.total)} in all; the last sweep, {found.lastAt.toISOString().slice(0, 16).replace("T", " ")} UTC, pruned {formatCount(found.lastRows)} older than{" "}
                  {found.horizon?.toISOString().slice(0, 10)}
                </>
              ) : (
                "nothing pruned yet"
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function Stat({ label, value, note, testId }: { label: string; value: string; note: string; testId: string }) {
  return (
    <div className="rounded-lg border border-stone-200 bg-white p-3">
      <p className="text-xs text-stone-500">{label}</p>
      <p data-testid={testId} className="text-lg font-semibold">
        {value}
      </p>
      <p className="text-xs text-stone-500">{note}</p>
    </div>
  );
}

function Breakdown({ title, rows, total, testId }: { title: string; testId: string; total: UsageTotals; rows: ({ key: string; label: string } & UsageTotals)[] }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-stone-200 bg-white">
      <table data-testid={testId} className="w-full text-left text-sm">
        <caption className="px-3 pt-2 text-left font-medium">{title}</caption>
        <thead className="text-xs text-stone-500">
          <tr>
            <th className="px-3 py-1.5 font-medium" />
            <th className="px-3 py-1.5 text-right font-medium" title="Runs with a finished Attempt">
              Runs finished
            </th>
            <th className="px-3 py-1.5 text-right font-medium">Agent time</th>
            <th className="px-3 py-1.5 text-right font-medium">Cost</th>
            <th className="px-3 py-1.5" />
          </tr>
        </thead>
        <tbody className="divide-y divide-stone-100">
          {rows.map((x) => (
            <tr key={x.key} data-testid="usage-row" data-label={x.label}>
              <td className="max-w-[12rem] truncate px-3 py-1.5" title={x.label}>
                {x.label}
              </td>
              <td className="px-3 py-1.5 text-right">{x.runs}</td>
              <td className="whitespace-nowrap px-3 py-1.5 text-right">{formatMinutes(x.minutes)}</td>
              <td className="whitespace-nowrap px-3 py-1.5 text-right" title={x.estimatedCostUsd > 0 ? `${formatUsd(x.estimatedCostUsd)} estimated` : undefined}>
                {x.estimatedCostUsd > 0 ? "≈ " : ""}
                {formatUsd(x.costUsd)}
              </td>
              <td className="px-3 py-1.5">
                <Meter kind="share" ratio={total.costUsd > 0 ? x.costUsd / total.costUsd : total.minutes > 0 ? x.minutes / total.minutes : 0} label={`${x.label}: its share`} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface Owner {
  key: string;
  scope: CapStatus["scope"];
  name: string;
  suspended: boolean;
  url: string;
  values: QuotaValues;
  caps: Map<CapStatus["limit"], CapStatus>;
}

function groupCaps(caps: CapStatus[]): Owner[] {
  const owners = new Map<string, Owner>();
  for (const c of caps) {
    const key = `${c.scope}:${c.repo ?? c.installationId}`;
    let o = owners.get(key);
    if (!o) {
      o = {
        key,
        scope: c.scope,
        name: c.name,
        suspended: c.suspended,
        url: c.repo ? `/api/v1/quotas/repositories/${c.repo.split("/").map(encodeURIComponent).join("/")}` : `/api/v1/quotas/installations/${c.installationId}`,
        values: { monthly_runs: 0, monthly_cost_usd: 0, max_concurrent: 0, open_rate_per_minute: 0 },
        caps: new Map(),
      };
      owners.set(key, o);
    }
    o.caps.set(c.limit, c);
    o.values[c.limit] = c.value;
  }
  return [...owners.values()];
}
