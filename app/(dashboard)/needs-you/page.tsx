import type { Metadata } from "next";
import Link from "next/link";
import type { Need, NeedKind } from "../../../lib/dashboard/needs-you";
import { getNeedsYou } from "../../../lib/dashboard/queries";
import { ActionButton } from "../../_components/action-button";
import { LiveRefresh } from "../../_components/live-refresh";
import { Empty, ExternalLink, PageHeader, Problem, Time } from "../../_components/ui";
import { load } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Needs you" };

const KIND: Record<NeedKind, { label: string; tone: string }> = {
  approval: { label: "Approval", tone: "bg-amber-100 text-amber-900" },
  review: { label: "Review and push", tone: "bg-amber-100 text-amber-900" },
  failure: { label: "Failed Run", tone: "bg-red-100 text-red-900" },
  engine_failure: { label: "Engine failure", tone: "bg-red-100 text-red-900" },
  budget_ask: { label: "Cycle budget", tone: "bg-orange-100 text-orange-900" },
  config_error: { label: "Config error", tone: "bg-fuchsia-100 text-fuchsia-900" },
  loop_error: { label: "Loop error", tone: "bg-fuchsia-100 text-fuchsia-900" },
  poll_error: { label: "Poll failure", tone: "bg-sky-100 text-sky-900" },
  quota: { label: "Quota", tone: "bg-violet-100 text-violet-900" },
};

export default async function NeedsYouPage() {
  const viewer = await requirePageViewer("/needs-you");
  const result = await load(() => getNeedsYou(dashboardContext(), viewer));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Needs you" />
        <Problem title="Needs you could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const { needs, total, writable } = result.data;
  const canWrite = new Set(writable);
  return (
    <>
      <PageHeader title="Needs you" subtitle={total ? `${total} thing${total === 1 ? "" : "s"} wait${total === 1 ? "s" : ""} for a person, newest first.` : undefined}>
        <LiveRefresh />
      </PageHeader>
      {needs.length === 0 ? (
        <Empty title="Nothing needs you">Approvals, failed Runs, cycle budget asks and configuration problems show up here.</Empty>
      ) : (
        <ul data-testid="needs" className="divide-y divide-stone-200 overflow-hidden rounded-lg border border-stone-200 bg-white">
          {needs.map((n) => (
            <li key={n.id} data-testid="need" data-kind={n.kind} className="flex flex-col gap-2 p-3 sm:flex-row sm:items-start sm:justify-between">
              <div className="min-w-0">
                <div className="flex flex-wrap items-center gap-2 text-sm">
                  <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${KIND[n.kind].tone}`}>{KIND[n.kind].label}</span>
                  {n.runId ? (
                    <Link href={`/runs/${n.runId}`} className="font-medium hover:underline">
                      {n.title}
                    </Link>
                  ) : (
                    <span className="font-medium">{n.title}</span>
                  )}
                </div>
                <p className="mt-1 text-xs text-stone-500">
                  {n.repo}
                  {n.number ? `#${n.number}` : ""}
                  {n.loop ? ` · ${n.loop}` : ""} · <Time iso={n.at} />
                </p>
                {n.detail ? <p className="mt-1 break-words text-sm text-stone-700">{n.detail}</p> : null}
              </div>
              <div className="flex shrink-0 flex-wrap gap-2">
                <NeedAction need={n} canWrite={canWrite.has(n.repo)} />
              </div>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function NeedAction({ need, canWrite }: { need: Need; canWrite: boolean }) {
  const a = need.action;
  switch (a.kind) {
    case "approve":
      return canWrite ? (
        <>
          <ActionButton url={`/api/v1/runs/${a.runId}/approve`} label="Approve" tone="primary" testId="need-approve" />
          <ActionButton url={`/api/v1/runs/${a.runId}/cancel`} label="Cancel" tone="danger" confirm="Cancel this Run?" testId="need-cancel" />
        </>
      ) : (
        <ReadOnly />
      );
    case "review_and_push":
      // Push is beside the diff, on the Run page: nobody pushes what they have not been shown
      return (
        <Link href={`/runs/${a.runId}`} className="font-medium text-emerald-700 underline" data-testid="need-review">
          Review and push
        </Link>
      );
    case "retry_or_resolve":
      return canWrite ? (
        <>
          <ActionButton url={`/api/v1/runs/${a.runId}/retry`} label="Retry" tone="primary" testId="need-retry" />
          <ActionButton url={`/api/v1/runs/${a.runId}/resolve-failure`} label="Resolve" testId="need-resolve" />
        </>
      ) : (
        <ReadOnly />
      );
    case "retry_or_cancel":
      return canWrite ? (
        <>
          <ActionButton url={`/api/v1/runs/${a.runId}/retry`} label="Retry" tone="primary" testId="need-retry" />
          <ActionButton url={`/api/v1/runs/${a.runId}/cancel`} label="Cancel" tone="danger" confirm="Cancel this Run?" testId="need-cancel" />
        </>
      ) : (
        <ReadOnly />
      );
    case "reset_budget":
      return canWrite ? (
        <ActionButton url="/api/v1/budgets/reset" body={{ itemKey: a.itemKey }} label="Reset budget" tone="primary" testId="need-reset-budget" />
      ) : (
        <ReadOnly />
      );
    case "fix_config":
      return <ExternalLink href={a.url}>Open .github/atelier.yml</ExternalLink>;
    case "check_polling":
      return (
        <Link href="/loops" className="text-emerald-700 underline">
          See Loops
        </Link>
      );
    case "review_quota":
      return (
        <Link href="/usage" className="text-emerald-700 underline">
          See usage and limits
        </Link>
      );
  }
}

function ReadOnly() {
  return <span className="text-xs text-stone-500">Needs write access</span>;
}
