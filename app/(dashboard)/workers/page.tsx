import type { Metadata } from "next";
import { getWorkers } from "../../../lib/dashboard/workers";
import { Empty, PageHeader, Problem, Time } from "../../_components/ui";
import { load } from "../../_server/page-data";
import { db } from "../../_server/db";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Workers" };

export default async function WorkersPage() {
  const viewer = await requirePageViewer("/workers");
  const result = await load(() => getWorkers(db(), viewer));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Workers" />
        <Problem title="The worker registry could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const { workers, live } = result.data;
  return (
    <>
      <PageHeader title="Workers" subtitle={`${live} alive. A worker is alive while it heartbeats (three times per lease TTL).`} />
      {workers.length === 0 ? (
        <Empty title="No worker has ever started">Start one with npm run worker (or the worker Deployment).</Empty>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-stone-200 bg-white">
          <table data-testid="workers" className="w-full text-left text-sm">
            <thead className="bg-stone-100 text-xs uppercase text-stone-600">
              <tr>
                <th className="px-3 py-2">Worker</th>
                <th className="px-3 py-2">Host</th>
                <th className="px-3 py-2">State</th>
                <th className="px-3 py-2">Running / slots</th>
                <th className="px-3 py-2">Last heartbeat</th>
                <th className="px-3 py-2">Started</th>
                <th className="px-3 py-2">Version</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-stone-200">
              {workers.map((w) => (
                <tr key={w.id} data-testid="worker-row" data-worker={w.id} data-alive={w.alive ? "true" : "false"}>
                  <td className="px-3 py-2 font-mono text-xs">{w.id}</td>
                  <td className="px-3 py-2">
                    {w.host === null ? <span className="text-stone-500">shown to admins</span> : <>{w.host} <span className="text-stone-500">pid {w.pid}</span></>}
                  </td>
                  <td className="px-3 py-2">
                    {w.alive ? (
                      <span className="rounded bg-emerald-100 px-1.5 text-emerald-800">alive</span>
                    ) : (
                      <span className="rounded bg-stone-200 px-1.5 text-stone-700">{w.stoppedAt ? "stopped" : "not heard from"}</span>
                    )}
                  </td>
                  <td className="px-3 py-2" data-testid="worker-load">
                    {w.running} / {w.slots}
                  </td>
                  <td className="px-3 py-2">
                    <Time iso={w.heartbeatAt} />
                  </td>
                  <td className="px-3 py-2">
                    <Time iso={w.startedAt} />
                  </td>
                  <td className="px-3 py-2 font-mono text-xs">{w.version ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
