import type { Metadata } from "next";
import type { LoopView } from "../../../lib/dashboard/loops";
import { getLoops } from "../../../lib/dashboard/queries";
import { ActionButton } from "../../_components/action-button";
import { DispatchForm } from "../../_components/dispatch-form";
import { Empty, PageHeader, Problem, Time } from "../../_components/ui";
import { load } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Loops" };

export default async function LoopsPage() {
  const viewer = await requirePageViewer("/loops");
  const result = await load(() => getLoops(dashboardContext(), viewer));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Loops" />
        <Problem title="The Loops could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const { loops, writable } = result.data;
  const canWrite = new Set(writable);
  return (
    <>
      <PageHeader title="Loops" subtitle="A paused Loop opens no new Run; Runs already open continue. Run now starts a Loop on an issue or pull request whatever its if: says." />
      {loops.length === 0 ? (
        <Empty title="No Loops">A repository declares its Loops in .github/atelier.yml.</Empty>
      ) : (
        <ul data-testid="loops" className="divide-y divide-stone-200 overflow-hidden rounded-lg border border-stone-200 bg-white">
          {loops.map((l) => (
            <li key={`${l.repo}/${l.loop}`} data-testid="loop" data-loop={l.loop} data-paused={l.paused} className="flex flex-col gap-2 p-3 sm:flex-row sm:items-center sm:justify-between">
              <div className="min-w-0 text-sm">
                <p className="flex flex-wrap items-center gap-2">
                  <span className="font-medium">{l.loop}</span>
                  <span className="text-stone-500">{l.repo}</span>
                  {l.trigger ? <span className="rounded bg-stone-100 px-1.5 text-xs text-stone-600">{l.trigger}</span> : null}
                  <LoopState loop={l} />
                </p>
                <p className="mt-1 text-xs text-stone-500">
                  Last poll <Time iso={l.lastPolledAt} />
                </p>
                {l.error ? (
                  <p className="mt-1 text-sm text-fuchsia-800">
                    {l.errorLine ? `line ${l.errorLine}: ` : ""}
                    {l.error}
                  </p>
                ) : null}
                {l.pollError ? <p className="mt-1 text-sm text-sky-800">Polling fails: {l.pollError}</p> : null}
              </div>
              {canWrite.has(l.repo) ? (
                <div className="flex flex-wrap items-center gap-3">
                  {l.trigger && l.trigger !== "schedule" ? <DispatchForm repo={l.repo} loop={l.loop} /> : null}
                  <ActionButton
                    url="/api/v1/loops/pause"
                    body={{ repo: l.repo, loop: l.loop, paused: !l.paused }}
                    label={l.paused ? "Unpause" : "Pause"}
                    tone={l.paused ? "primary" : "neutral"}
                    testId="loop-toggle"
                  />
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A Loop's state: an error blocks it (whatever its pause), else paused or active. */
function LoopState({ loop }: { loop: LoopView }) {
  const [text, tone] = loop.error
    ? ["error", "bg-red-100 text-red-900"]
    : loop.paused
      ? [`paused${loop.pausedBy ? ` by ${loop.pausedBy}` : ""}`, "bg-amber-100 text-amber-900"]
      : ["active", "bg-emerald-100 text-emerald-900"];
  return (
    <span data-testid="loop-state" className={`rounded px-1.5 text-xs font-medium ${tone}`}>
      {text}
    </span>
  );
}
