import type { Metadata } from "next";
import Link from "next/link";
import { getAudit } from "../../../lib/dashboard/queries";
import { auditQuery } from "../../../lib/dashboard/schemas";
import { Empty, PageHeader, Problem, Time } from "../../_components/ui";
import { parseQuery } from "../../_server/api";
import { load } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Audit" };

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  // a `before` that is no audit entry's id (not digits, or past a bigint) reads as the first page
  const parsed = parseQuery({ before: typeof sp.before === "string" ? sp.before : undefined }, auditQuery);
  const before = parsed.ok ? parsed.data.before : undefined;
  const viewer = await requirePageViewer("/audit");
  const result = await load(() => getAudit(dashboardContext(), viewer, { before }));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Audit" />
        <Problem title="The audit log could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const { entries, next } = result.data;
  return (
    <>
      <PageHeader title="Audit" subtitle="Every operator action, who did it and when." />
      {entries.length === 0 ? (
        <Empty title="No operator action yet" />
      ) : (
        <ul data-testid="audit" className="divide-y divide-stone-200 overflow-hidden rounded-lg border border-stone-200 bg-white text-sm">
          {entries.map((e) => (
            <li key={e.id} className="flex flex-wrap items-center gap-x-2 gap-y-0.5 px-3 py-2">
              <span className="font-medium">{e.actor}</span> <span>{e.action.replaceAll("_", " ")}</span>{" "}
              {e.runId ? (
                <Link href={`/runs/${e.runId}`} className="font-mono text-xs text-emerald-700 underline">
                  {e.runId.slice(0, 8)}
                </Link>
              ) : null}
              {e.repo ? <span className="text-stone-500">{e.repo}</span> : null}
              <span className="ml-auto text-xs text-stone-500">
                <Time iso={e.at} />
              </span>
            </li>
          ))}
        </ul>
      )}
      {next ? (
        <p className="mt-3 text-sm">
          <Link href={`/audit?before=${next}`} className="underline">
            Older entries
          </Link>
        </p>
      ) : null}
    </>
  );
}
