import type { Metadata } from "next";
import Link from "next/link";
import type { HookOwner } from "../../lib/outbound/hooks";
import { deliveryLogFor } from "../../lib/outbound/manage-hooks";
import { NOTICE_TITLES } from "../../lib/outbound/notices";
import { ActionButton } from "../_components/action-button";
import { Empty, PageHeader, Problem, Time } from "../_components/ui";
import { db } from "../_server/db";
import { load } from "../_server/page-data";
import { requirePageViewer } from "../_server/viewer";
import { HookEventsForm } from "./hook-events-form";
import { HookForm } from "./hook-form";

export const metadata: Metadata = { title: "Webhook deliveries" };

const ownerLabel = (o: HookOwner): string =>
  o.kind === "instance" ? "the instance" : o.kind === "installation" ? `installation ${o.installationId}` : `${o.repo} · ${o.loop}`;
export const dynamic = "force-dynamic";

const STATUS_TONE: Record<string, string> = {
  delivered: "bg-emerald-50 text-emerald-800 ring-emerald-300",
  pending: "bg-amber-50 text-amber-800 ring-amber-300",
  failed: "bg-red-50 text-red-800 ring-red-300",
};

export default async function DeliveriesPage() {
  const viewer = await requirePageViewer("/deliveries");
  const result = await load(() => deliveryLogFor(db(), viewer));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Webhook deliveries" />
        <Problem title="The delivery log could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const { hooks, deliveries, installations, admin } = result.data;
  return (
    <>
      <PageHeader
        title="Webhook deliveries"
        subtitle="Atelier POSTs every Run that ends (run.succeeded, run.failed, run.canceled) to the webhooks below, signed with X-Atelier-Signature, and the notices each target is subscribed to (a Slack target gets them as messages); a failed delivery is tried again for about two hours."
      />

      <section aria-label="Webhooks" className="mb-6 space-y-2">
        <h2 className="text-base font-semibold">Webhooks</h2>
        {hooks.length === 0 ? (
          <Empty title="No webhook yet">Add one for the instance or an installation (admins), or for a Loop of a repository you administer.</Empty>
        ) : (
          <ul data-testid="hooks" className="divide-y divide-stone-100 rounded-lg border border-stone-200 bg-white text-sm">
            {hooks.map((h) => (
              <li key={h.id} data-testid="hook" className="flex flex-wrap items-center gap-2 px-3 py-2">
                <span className="rounded bg-stone-100 px-1.5 py-0.5 text-xs text-stone-600">{ownerLabel(h.owner)}</span>
                <span data-testid="hook-kind" className="rounded bg-sky-50 px-1.5 py-0.5 text-xs text-sky-800">
                  {h.kind === "slack" ? "Slack" : "webhook"}
                </span>
                <span className="break-all font-mono text-xs">{h.url}</span>
                {h.secretHint ? <span className="text-xs text-stone-500">secret …{h.secretHint}</span> : null}
                <span className="text-xs text-stone-500">
                  {[h.kind === "webhook" ? "every Run that ends" : null, ...h.events.map((e) => NOTICE_TITLES[e].toLowerCase())].filter(Boolean).join(", ") || "no notice"}
                </span>
                <span className="ml-auto">
                  <ActionButton url={`/api/v1/outbound/hooks/${h.id}/test`} label="Send a test" testId="test-delivery" />
                </span>
                <HookEventsForm id={h.id} events={h.events} />
              </li>
            ))}
          </ul>
        )}
        <HookForm installations={installations} admin={admin} />
      </section>

      <section aria-label="Deliveries">
        <h2 className="mb-2 text-base font-semibold">Delivery log</h2>
        {deliveries.length === 0 ? (
          <Empty title="No delivery yet">A delivery is written when a Run a webhook hears of ends, for each notice a target is subscribed to, and for each test.</Empty>
        ) : (
          <div className="overflow-x-auto rounded-lg border border-stone-200 bg-white">
            <table data-testid="deliveries" className="w-full min-w-[56rem] text-left text-sm">
              <thead className="border-b border-stone-200 text-xs text-stone-500">
                <tr>
                  <th className="px-3 py-2 font-medium">Delivery</th>
                  <th className="px-3 py-2 font-medium">Run</th>
                  <th className="px-3 py-2 font-medium">To</th>
                  <th className="px-3 py-2 font-medium">Status</th>
                  <th className="px-3 py-2 font-medium">Tries</th>
                  <th className="px-3 py-2 font-medium">Last answer</th>
                  <th className="px-3 py-2" />
                </tr>
              </thead>
              <tbody className="divide-y divide-stone-100">
                {deliveries.map((d) => (
                  <tr key={d.id} data-testid="delivery" data-status={d.status}>
                    <td className="px-3 py-2">
                      <span className="font-mono text-xs">#{d.id}</span> <span className="font-medium">{d.event}</span>
                      <span className="block text-xs text-stone-500">
                        <Time iso={d.createdAt.toISOString()} />
                      </span>
                    </td>
                    <td className="px-3 py-2">
                      {d.runId ? (
                        <Link href={`/runs/${d.runId}`} className="font-mono text-xs hover:underline">
                          {d.runId.slice(0, 12)}
                        </Link>
                      ) : (
                        <span className="text-xs text-stone-500">no Run</span>
                      )}
                      <span className="block text-xs text-stone-500">{d.repo}</span>
                    </td>
                    <td className="max-w-[16rem] break-all px-3 py-2 font-mono text-xs">{d.url ?? <span className="text-stone-500">deleted webhook</span>}</td>
                    <td className="px-3 py-2">
                      <span className={`inline-flex rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STATUS_TONE[d.status] ?? STATUS_TONE.pending}`}>{d.status}</span>
                      {d.status === "pending" ? (
                        <span className="block text-xs text-stone-500">
                          next try {d.nextAt.toISOString().slice(11, 19)} UTC
                        </span>
                      ) : null}
                    </td>
                    <td className="px-3 py-2">{d.attempts}</td>
                    <td className="max-w-[18rem] px-3 py-2 text-xs">
                      {d.lastStatus !== null ? <span className="font-mono">HTTP {d.lastStatus}</span> : null}
                      {d.lastError ? <span className="block break-words text-red-800">{d.lastError}</span> : null}
                    </td>
                    <td className="px-3 py-2 text-right">
                      <ActionButton url={`/api/v1/outbound/deliveries/${d.id}/redeliver`} label="Redeliver" testId="redeliver" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
