import type { Metadata } from "next";
import { isLoopBroken, type LoopView } from "../../../lib/dashboard/loops-page";
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
  const { repositories, loops, writable } = result.data;
  const canWrite = new Set(writable);
  return (
    <>
      <PageHeader
        title="Loops"
        subtitle="A paused Loop opens no new Run; Runs already open continue. Run now starts a Loop on an issue or pull request whatever its if: says. Check config now reads .github/atelier.yml from GitHub at once."
      />
      {repositories.length === 0 ? (
        <Empty title="No Loops">A repository declares its Loops in .github/atelier.yml.</Empty>
      ) : (
        <div className="space-y-4">
          {repositories.map((r) => {
            const own = loops.filter((l) => l.repo === r.repo);
            return (
              <section key={r.repo} data-testid="loops-repo" data-repo={r.repo} aria-label={r.repo} className="overflow-hidden rounded-lg border border-stone-200 bg-white">
                <div className="flex flex-wrap items-center justify-between gap-2 border-b border-stone-200 bg-stone-50 px-3 py-2 text-sm">
                  <div className="min-w-0">
                    <h2 className="font-semibold">{r.repo}</h2>
                    <p className="text-xs text-stone-600" data-testid="config-read-at">
                      .github/atelier.yml {r.readAt ? <>read <Time iso={r.readAt} /></> : "not read yet"}
                    </p>
                    {r.configError ? (
                      <p role="status" data-testid="config-error" className="mt-1 text-sm text-red-800">
                        {r.configError}
                      </p>
                    ) : null}
                  </div>
                  {canWrite.has(r.repo) ? (
                    <ActionButton url="/api/v1/loops/check-config" body={{ repo: r.repo }} label="Check config now" pendingLabel="Reading…" testId="check-config" />
                  ) : null}
                </div>
                {own.length === 0 ? (
                  <p className="px-3 py-4 text-sm text-stone-600">No Loop in .github/atelier.yml.</p>
                ) : (
                  <ul data-testid="loops" className="divide-y divide-stone-200">
                    {own.map((l) => (
                      <LoopRow key={l.loop} loop={l} canWrite={canWrite.has(l.repo)} />
                    ))}
                  </ul>
                )}
              </section>
            );
          })}
        </div>
      )}
    </>
  );
}

function LoopRow({ loop: l, canWrite }: { loop: LoopView; canWrite: boolean }) {
  return (
    <li data-testid="loop" data-loop={l.loop} data-paused={l.paused} data-broken={isLoopBroken(l)} className="flex flex-col gap-2 p-3 sm:flex-row sm:items-center sm:justify-between">
      <div className="min-w-0 text-sm">
        <p className="flex flex-wrap items-center gap-2">
          <span className="font-medium">{l.loop}</span>
          <span className="text-xs text-stone-600">{l.repo}</span>
          {l.trigger ? <span className="rounded bg-stone-100 px-1.5 text-xs text-stone-600">{l.trigger}</span> : null}
          <LoopState loop={l} />
        </p>
        <p className="mt-1 text-xs text-stone-600">
          Last poll <Time iso={l.lastPolledAt} />
        </p>
        {l.error ? (
          <p data-testid="loop-error" className="mt-1 text-sm text-red-800">
            {l.errorLine ? `line ${l.errorLine}: ` : ""}
            {l.error}
          </p>
        ) : !l.valid ? (
          <p data-testid="loop-error" className="mt-1 text-sm text-red-800">
            Its definition in .github/atelier.yml is not valid.
          </p>
        ) : null}
        {l.pollError ? <p className="mt-1 text-sm text-sky-800">Polling fails: {l.pollError}</p> : null}
      </div>
      {canWrite ? (
        <div className="flex flex-wrap items-center gap-3">
          {l.trigger && l.trigger !== "schedule" && l.valid ? <DispatchForm repo={l.repo} loop={l.loop} /> : null}
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
  );
}

/** A Loop's state: broken config blocks it (whatever its pause), else paused or active. */
function LoopState({ loop }: { loop: LoopView }) {
  const [text, tone] = isLoopBroken(loop)
    ? ["error", "bg-red-100 text-red-900"]
    : loop.paused
      ? [`paused${loop.pausedBy ? ` by ${loop.pausedBy}` : ""}`, "bg-amber-100 text-amber-900"]
      : ["active", "bg-emerald-100 text-emerald-900"];
  return (
    <span data-testid="loop-state" data-state={text.split(" ")[0]} className={`rounded px-1.5 text-xs font-medium ${tone}`}>
      {text}
    </span>
  );
}
