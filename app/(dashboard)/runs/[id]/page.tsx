import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { instanceConfig } from "../../../../lib/auth/instance-config";
import { formatDurationMs, formatUsdExact } from "../../../../lib/dashboard/format";
import { getRun } from "../../../../lib/dashboard/queries";
import type { RunAction } from "../../../../lib/dashboard/run-status";
import { runIdParam } from "../../../../lib/http/url-ids";
import { KEPT_TRANSCRIPT_LINES } from "../../../../lib/retention/prune-history";
import { verifyEnding } from "../../../../lib/executor/verify-rounds";
import type { VerifyVerdict } from "../../../../lib/executor/verify-spec";
import { ActionButton } from "../../../_components/action-button";
import { LiveTranscript } from "../../../_components/live-transcript";
import { EditAndRetryForm, InterveneForm } from "../../../_components/run-forms";
import { HeldCommitsReview } from "../../../_components/held-commits";
import { Empty, ExternalLink, PageHeader, Problem, StateBadge, Time } from "../../../_components/ui";
import { load } from "../../../_server/page-data";
import { dashboardContext } from "../../../_server/services";
import { requirePageViewer } from "../../../_server/viewer";

export const metadata: Metadata = { title: "Run" };

const VERIFY_WORDS: Record<VerifyVerdict, string> = {
  passed: "the agent succeeded and verify passed",
  failed: "the agent succeeded and verify failed",
  not_declared: "no verify declared",
};

const BUTTONS: Partial<Record<RunAction, { label: string; path: string; tone: "primary" | "neutral" | "danger"; confirm?: string }>> = {
  approve: { label: "Approve", path: "approve", tone: "primary" },
  retry: { label: "Retry", path: "retry", tone: "primary" },
  "resolve-failure": { label: "Resolve failure", path: "resolve-failure", tone: "neutral" },
  cancel: { label: "Cancel Run", path: "cancel", tone: "danger", confirm: "Cancel this Run? A running agent is stopped." },
  push: {
    label: "Push",
    path: "push",
    tone: "primary",
    confirm: "Push these commits? Their branch and pull request are made, and the repository's CI runs this code with its secrets.",
  },
  discard: { label: "Discard", path: "discard", tone: "danger", confirm: "Discard these commits? Nothing of them is left on GitHub." },
};

export default async function RunPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const viewer = await requirePageViewer(`/runs/${id}`);
  const result = await load(() => getRun(dashboardContext(), viewer, runIdParam(id)));
  // a Run that does not exist, that the viewer cannot see, or whose id cannot be one, is a 404 (inside the navigation)
  if (!result.ok && result.status === 404) notFound();
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Run" subtitle={<span className="font-mono">{id}</span>} />
        <Problem title="This Run cannot be shown" message={result.message} token={result.token} />
      </>
    );
  }
  const run = result.data;
  const roster = (await instanceConfig()).agents;
  const agents = Object.keys(roster);
  // the models each agent offers (its default first): Edit and retry picks among them
  const models = Object.fromEntries(Object.values(roster).map((a) => [a.name, [...new Set([a.model, ...a.models].filter((m): m is string => !!m))]]));
  const latest = run.attempts.at(-1) ?? null;
  const actions = run.canAct ? run.actions : [];

  return (
    <div className="space-y-5">
      <PageHeader
        title={run.item?.title ?? `${run.repo}${run.number ? `#${run.number}` : ""}`}
        subtitle={
          <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
            <StateBadge state={run.state} testId="run-state" />
            {run.cancelReason ? <span className="text-stone-500">({run.cancelReason})</span> : null}
            <span>
              Loop <strong>{run.loop}</strong> on{" "}
              {run.item ? <ExternalLink href={run.item.url}>{`${run.repo}#${run.number}`}</ExternalLink> : run.repo}
            </span>
            {run.waitsFor ? <span data-testid="run-waits-for">· waits for {run.waitsFor}</span> : null}
            {run.verify ? (
              <span data-testid="run-verify" className={run.verify === "failed" ? "font-medium text-red-700" : run.verify === "passed" ? "text-emerald-700" : "text-stone-500"}>
                · {VERIFY_WORDS[run.verify]}
              </span>
            ) : null}
          </span>
        }
      >
        {run.pullRequestUrl ? (
          <ExternalLink href={run.pullRequestUrl} testId="run-pr-link" className="rounded-md bg-violet-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-violet-800">
            Pull request #{run.pullRequestNumber}
          </ExternalLink>
        ) : null}
      </PageHeader>

      {actions.length ? (
        <div id="actions" data-testid="run-actions" className="flex flex-wrap items-start gap-2">
          {actions.map((a) => {
            const b = BUTTONS[a];
            return b ? (
              <ActionButton key={a} url={`/api/v1/runs/${run.id}/${b.path}`} label={b.label} tone={b.tone} confirm={b.confirm} testId={`action-${a}`} />
            ) : null;
          })}
        </div>
      ) : !run.canAct && run.actions.length ? (
        <p data-testid="read-only-note" className="text-sm text-stone-500">
          You can see this Run; acting on it needs write access to {run.repo} on GitHub.
        </p>
      ) : null}

      {run.held ? <HeldCommitsReview held={run.held} why={run.push.why} /> : null}

      {actions.includes("edit-and-retry") ? (
        <details className="rounded-lg border border-stone-200 bg-white p-3" data-testid="action-edit-and-retry">
          <summary className="cursor-pointer text-sm font-medium">Edit the task and retry</summary>
          <div className="mt-3">
            <EditAndRetryForm runId={run.id} prompt={run.prompt} agent={run.agent} model={run.model} agents={agents} models={models} />
          </div>
        </details>
      ) : null}
      {actions.includes("intervene") && latest ? (
        <div className="rounded-lg border border-stone-200 bg-white p-3" data-testid="action-intervene">
          <p className="mb-2 text-sm font-medium">Intervene in attempt {latest.number}</p>
          <InterveneForm runId={run.id} attemptId={latest.id} />
        </div>
      ) : null}

      <div className="grid gap-5 lg:grid-cols-[minmax(0,2fr)_minmax(0,1fr)]">
        <div className="min-w-0 space-y-5">
          <LiveTranscript runId={run.id} initialState={`${run.state}`} />

          <section aria-labelledby="attempts-title" className="rounded-lg border border-stone-200 bg-white">
            <h2 id="attempts-title" className="border-b border-stone-200 px-3 py-2 text-sm font-semibold">
              Attempts
            </h2>
            {run.attempts.length === 0 ? (
              <p className="px-3 py-4 text-sm text-stone-500">No Attempt has started{run.waitsFor ? `: the Run waits for ${run.waitsFor}` : ""}.</p>
            ) : (
              <ul className="divide-y divide-stone-100">
                {run.attempts.map((a) => (
                  <li key={a.id} data-testid="attempt" className="px-3 py-2 text-sm">
                    <div className="flex flex-wrap items-center gap-2">
                      <span className="font-medium">#{a.number}</span>
                      <StateBadge state={a.state} />
                      <span className="text-stone-500">
                        {a.agent ?? run.agent} · <Time iso={a.startedAt} /> · {formatDurationMs(a.durationMs)}
                      </span>
                      {a.model ? <span className="text-stone-500" data-testid="attempt-model">· {a.model}</span> : null}
                      {a.turns !== null ? (
                        <span className="text-stone-500" data-testid="attempt-turns">
                          · {a.turns} turn{a.turns === 1 ? "" : "s"}
                        </span>
                      ) : null}
                      {a.costUsd ? (
                        <span className="text-stone-500" data-testid="attempt-cost">
                          · {a.costEstimated ? "~" : ""}
                          {formatUsdExact(Number(a.costUsd))}
                          {a.costExact ? " (exact)" : a.costEstimated ? " (estimated)" : ""}
                        </span>
                      ) : null}
                      {a.tokensIn !== null || a.tokensOut !== null ? (
                        <span className="text-stone-500">
                          · {a.tokensIn ?? 0}↓ {a.tokensOut ?? 0}↑ tokens
                        </span>
                      ) : null}
                    </div>
                    {a.failureKind ? (
                      <p className="mt-1 text-red-800">
                        <span className="font-medium">{a.failureKind}</span>
                        {a.failureCategory ? <span className="text-red-700"> · {a.failureCategory}</span> : null}
                        {a.retryable !== null ? <span className="text-stone-500"> · {a.retryable ? "retryable" : "not retryable"}</span> : null}
                        {a.failureMessage ? <span className="block text-red-700">{a.failureMessage}</span> : null}
                      </p>
                    ) : null}
                    {a.interrupted ? (
                      <p data-testid="attempt-interrupted" className="mt-1 text-amber-800">
                        Interrupted{a.sessionId ? `: its agent's session ${a.sessionId} was kept for the next Attempt` : ""}.
                      </p>
                    ) : null}
                    {a.resumedSession ? (
                      <p data-testid="attempt-resumed" className="mt-1 text-stone-600">
                        Resumed the agent's session {a.resumedSession}
                        {a.resumedInterrupted ? ` of interrupted Attempt #${a.number - 1}` : ""}.
                      </p>
                    ) : null}
                                        {a.summary ? <p className="mt-1 text-stone-600" data-testid="attempt-summary">{a.summary}</p> : null}
                    {a.transcriptPrunedAt ? (
                      <p className="mt-1 text-xs text-stone-500" data-testid="attempt-pruned">
                        Transcript pruned <Time iso={a.transcriptPrunedAt} /> by the instance&apos;s retention: its summary, usage and last {KEPT_TRANSCRIPT_LINES} lines are kept.
                      </p>
                    ) : null}
                    {a.verify ? (
                      <div data-testid="attempt-verify" className={`mt-1 ${a.verify.passed ? "text-emerald-800" : "text-red-800"}`}>
                        <p>
                          Verify <code className="rounded bg-stone-100 px-1">{a.verify.command}</code> {verifyEnding(a.verify)}
                          {a.verify.rounds > 1 ? ` (after ${a.verify.rounds - 1} resumed round${a.verify.rounds === 2 ? "" : "s"} of the agent)` : ""}
                        </p>
                        {a.verify.tail ? (
                          <pre data-testid="attempt-verify-tail" className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap rounded bg-stone-900 p-2 text-xs text-stone-100">
                            {a.verify.tail}
                          </pre>
                        ) : null}
                      </div>
                    ) : null}
                  </li>
                ))}
              </ul>
            )}
          </section>
        </div>

        <aside className="min-w-0 space-y-5">
          <section className="rounded-lg border border-stone-200 bg-white p-3 text-sm">
            <h2 className="mb-2 font-semibold">Details</h2>
            <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1">
              <dt className="text-stone-500">Run</dt>
              <dd className="truncate font-mono text-xs">{run.id}</dd>
              <dt className="text-stone-500">Agent</dt>
              <dd>{run.agent}</dd>
              {run.model ? (
                <>
                  <dt className="text-stone-500">Model</dt>
                  <dd data-testid="run-model">{run.model}</dd>
                </>
              ) : null}
              <dt className="text-stone-500">CI</dt>
              <dd data-testid="run-push">{run.push.sentence}</dd>
              <dt className="text-stone-500">Approval</dt>
              <dd>{run.approvalRequired ? (run.approval ? `by ${run.approval.approvedBy}` : "required") : "not required"}</dd>
              <dt className="text-stone-500">Received</dt>
              <dd>
                <Time iso={run.receivedAt} />
              </dd>
              <dt className="text-stone-500">Started</dt>
              <dd>
                <Time iso={run.startedAt} />
              </dd>
              <dt className="text-stone-500">
                <Link href="/insights#def-trigger-to-start" className="underline decoration-dotted underline-offset-2">
                  Trigger → start
                </Link>
              </dt>
              <dd data-testid="run-trigger-to-start">{run.triggerToStartMs === null ? "not started" : formatDurationMs(run.triggerToStartMs)}</dd>
              <dt className="text-stone-500">Ended</dt>
              <dd>
                <Time iso={run.endedAt} />
              </dd>
              {run.branch ? (
                <>
                  <dt className="text-stone-500">Branch</dt>
                  <dd className="truncate font-mono text-xs">{run.branch}</dd>
                </>
              ) : null}
            </dl>
          </section>

          <section className="rounded-lg border border-stone-200 bg-white p-3 text-sm" data-testid="run-event">
            <h2 className="mb-2 font-semibold">The Event that opened it</h2>
            {run.event ? (
              <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1">
                <dt className="text-stone-500">Kind</dt>
                <dd>{run.event.kind}</dd>
                <dt className="text-stone-500">Status</dt>
                <dd>
                  {run.event.status}
                  {run.event.reason ? ` (${run.event.reason})` : ""}
                </dd>
                <dt className="text-stone-500">Seen</dt>
                <dd>
                  <Time iso={run.event.receivedAt} />
                </dd>
                <dt className="text-stone-500">Started by</dt>
                <dd data-testid="run-actor">
                  {run.event.actor ? `${run.event.actor.login} (${run.event.actor.permission}, from the ${run.event.actor.source})` : "the schedule"}
                </dd>
                <dt className="text-stone-500">Declared in</dt>
                <dd>{run.event.declaredIn}</dd>
                {run.event.chainDepth > 0 ? (
                  <>
                    <dt className="text-stone-500">Chain depth</dt>
                    <dd>{run.event.chainDepth}</dd>
                  </>
                ) : null}
                {run.event.approvalSentence && !run.approval ? (
                  <>
                    <dt className="text-stone-500">Approval</dt>
                    <dd>{run.event.approvalSentence}</dd>
                  </>
                ) : null}
                <dt className="text-stone-500">Generation</dt>
                <dd>{run.event.generation}</dd>
                <dt className="text-stone-500">Key</dt>
                <dd className="break-all font-mono text-[11px] text-stone-600">{run.event.id}</dd>
              </dl>
            ) : (
              <p className="text-stone-500">The Event is not recorded.</p>
            )}
          </section>

          {/* open while it waits: the approver reads the exact prompt before approving */}
          <details className="rounded-lg border border-stone-200 bg-white p-3 text-sm" open={run.state === "Waiting"} data-testid="run-prompt">
            <summary className="cursor-pointer font-semibold">Task given to the agent</summary>
            <pre className="mt-2 max-h-64 overflow-auto whitespace-pre-wrap break-words rounded bg-stone-50 p-2 font-mono text-xs">{run.prompt}</pre>
          </details>

          <section className="rounded-lg border border-stone-200 bg-white p-3 text-sm" data-testid="run-audit">
            <h2 className="mb-2 font-semibold">Operator actions</h2>
            {run.audit.length === 0 ? (
              <p className="text-stone-500">Nobody has acted on this Run.</p>
            ) : (
              <ul className="space-y-1">
                {run.audit.map((a) => (
                  <li key={a.id} className="flex flex-wrap gap-x-2">
                    <span className="font-medium">{a.actor}</span> <span>{a.action.replaceAll("_", " ")}</span>{" "}
                    <span className="text-stone-500">
                      <Time iso={a.at} />
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <p className="text-sm">
            <Link href="/board" className="text-stone-600 underline">
              ← Board
            </Link>
          </p>
        </aside>
      </div>
      {run.attempts.length === 0 && run.state === "Canceled" ? <Empty title="This Run was canceled before it started." /> : null}
    </div>
  );
}
