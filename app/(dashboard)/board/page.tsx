import type { Metadata } from "next";
import Link from "next/link";
import type { BoardCard } from "../../../lib/dashboard/board";
import { getBoard } from "../../../lib/dashboard/queries";
import { boardQuery } from "../../../lib/dashboard/schemas";
import { Elapsed } from "../../_components/elapsed";
import { FilterSelect } from "../../_components/filter-select";
import { LiveRefresh } from "../../_components/live-refresh";
import { BoardMoves, CardDrag, LaneDrop } from "../../_components/board-moves";
import { Empty, ExternalLink, Label, PageHeader, Problem, StateBadge, Time } from "../../_components/ui";
import { issueUrl, pullRequestUrl } from "../../../lib/dashboard/links";
import { parseQuery } from "../../_server/api";
import { load } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Board" };

type Search = Promise<Record<string, string | string[] | undefined>>;

function one(v: string | string[] | undefined): string | undefined {
  return (Array.isArray(v) ? v[0] : v) || undefined;
}

export default async function BoardPage({ searchParams }: { searchParams: Search }) {
  const sp = await searchParams;
  const parsed = parseQuery({ repo: one(sp.repo), loop: one(sp.loop), perLane: one(sp.perLane) }, boardQuery);
  const q = parsed.ok ? parsed.data : {};
  const viewer = await requirePageViewer(`/board${q.repo || q.loop ? `?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))}` : ""}`);
  const result = await load(() => getBoard(dashboardContext(), viewer, q));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Board" />
        <Problem title="The Board could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const { board, repos, loops, filter, writable } = result.data;
  const canWrite = new Set(writable);
  const cards = board.lanes.reduce((n, l) => n + l.total, 0);

  return (
    <>
      <PageHeader title="Board" subtitle={`${cards} Item${cards === 1 ? "" : "s"} in ${repos.length} repositor${repos.length === 1 ? "y" : "ies"}`}>
        <LiveRefresh />
        <form method="get" className="flex flex-wrap items-end gap-2 text-sm" aria-label="Filter the Board">
          <FilterSelect name="repo" label="Repository" all="All repositories" value={filter.repo} options={repos} />
          <FilterSelect name="loop" label="Loop" all="All Loops" value={filter.loop} options={loops} />
          <button type="submit" className="rounded-md bg-stone-800 px-3 py-1.5 font-medium text-white">
            Filter
          </button>
          {filter.repo || filter.loop ? (
            <Link href="/board" className="px-1 py-1.5 text-stone-600 underline">
              Clear
            </Link>
          ) : null}
        </form>
      </PageHeader>

      {repos.length === 0 ? (
        <Empty title="No repositories yet">
          Install the GitHub App on a repository you can see, and add <code>.github/atelier.yml</code> to it. The{" "}
          <Link href="/repositories" className="underline">
            Repositories
          </Link>{" "}
          page shows what Atelier sees.
        </Empty>
      ) : (
        <BoardMoves>
          <div data-testid="board" className="grid auto-cols-[minmax(16rem,1fr)] gap-3 max-md:grid-cols-1 md:grid-flow-col md:overflow-x-auto md:pb-2">
            {board.lanes.map((lane) => (
              <LaneDrop key={lane.name} name={lane.name} open={lane.state === "open"} className="flex min-w-0 flex-col rounded-lg bg-stone-100 p-2">
                <h2 className="mb-2 flex items-center justify-between px-1 text-sm font-semibold text-stone-700">
                  <span>
                    {lane.name}
                    {lane.label ? <span className="ml-1 font-normal text-stone-600">· {lane.label}</span> : null}
                  </span>
                  <span className="rounded-full bg-stone-200 px-2 text-xs text-stone-600">{lane.total}</span>
                </h2>
                {lane.cards.length === 0 ? (
                  <p className="px-1 py-4 text-center text-xs text-stone-600">Nothing here</p>
                ) : (
                  <ul className="flex flex-col gap-2">
                    {lane.cards.map((card) => (
                      <Card key={card.key} card={card} lane={lane.name} movable={lane.state === "open" && canWrite.has(card.repo)} />
                    ))}
                  </ul>
                )}
                {lane.total > lane.cards.length ? (
                  <p className="mt-2 px-1 text-xs text-stone-500">
                    Showing the {lane.cards.length} most recent of {lane.total}.{" "}
                    {board.perLane < 200 ? (
                      <Link
                        className="underline"
                        href={`/board?${new URLSearchParams({ ...(filter.repo ? { repo: filter.repo } : {}), ...(filter.loop ? { loop: filter.loop } : {}), perLane: "200" })}`}
                      >
                        Show more
                      </Link>
                    ) : (
                      "Filter by repository to narrow it."
                    )}
                  </p>
                ) : null}
              </LaneDrop>
            ))}
          </div>
        </BoardMoves>
      )}
    </>
  );
}

function Card({ card, lane, movable }: { card: BoardCard; lane: string; movable: boolean }) {
  const run = card.run;
  return (
    <CardDrag card={{ repo: card.repo, number: card.number, lane }} movable={movable} className="rounded-md border border-stone-200 bg-white p-2.5 shadow-sm">
      <div className="flex items-start justify-between gap-2">
        <ExternalLink href={issueUrl(card.repo, card.number, card.kind)} className="min-w-0 text-sm font-medium leading-snug text-stone-900 hover:underline">
          {card.title}
        </ExternalLink>
        {card.kind === "pull_request" ? <span className="shrink-0 rounded bg-violet-50 px-1 text-[10px] text-violet-700">PR</span> : null}
      </div>
      <p className="mt-0.5 text-xs text-stone-500">
        {card.repo}#{card.number} · <Time iso={card.updatedAt} />
      </p>
      {card.labels.length ? (
        <div className="mt-1.5 flex flex-wrap gap-1">
          {card.labels.slice(0, 6).map((l) => (
            <Label key={l} name={l} />
          ))}
        </div>
      ) : null}
      {run ? (
        <div className="mt-2 border-t border-stone-100 pt-2 text-xs">
          <div className="flex flex-wrap items-center gap-1.5">
            <Link href={`/runs/${run.id}`} className="inline-flex items-center gap-1.5 hover:underline" data-testid="card-run">
              <StateBadge state={run.state} testId="card-run-state" />
              <span className="text-stone-600">{run.loop}</span>
            </Link>
            {run.attempt ? <span className="text-stone-500">attempt {run.attempt}</span> : null}
            {run.pullRequestNumber ? (
              <span className="inline-flex items-center gap-1" data-testid="card-pr">
                <ExternalLink href={pullRequestUrl(card.repo, run.pullRequestNumber)} className="text-emerald-700 underline">
                  PR #{run.pullRequestNumber}
                </ExternalLink>
                {run.pullRequestState ? (
                  <span data-testid="card-pr-state" className={`rounded px-1 ${PR_STATE_STYLE[run.pullRequestState] ?? "bg-stone-100 text-stone-700"}`}>
                    {run.pullRequestState}
                  </span>
                ) : null}
              </span>
            ) : null}
          </div>
          {run.runningSince ? (
            <p className="mt-1 text-stone-600">
              running for <Elapsed since={run.runningSince} testId="card-elapsed" />
            </p>
          ) : null}
          {run.lastStep ? (
            <p className="mt-0.5 truncate font-mono text-[11px] text-stone-600" data-testid="card-last-step" title={run.lastStep}>
              {run.lastStep}
            </p>
          ) : null}
          {run.waitsFor ? <p className="mt-1 text-stone-600">Waits for {run.waitsFor}</p> : null}
          {run.state === "Failed" && run.failureKind ? <p className="mt-0.5 text-red-700">{run.failureKind}</p> : null}
        </div>
      ) : null}
      {card.budgetAsk ? (
        <p className="mt-2 rounded bg-amber-50 px-1.5 py-1 text-xs text-amber-800">
          Cycle budget used up —{" "}
          <Link href="/needs-you" className="underline">
            reset it
          </Link>
        </p>
      ) : null}
    </CardDrag>
  );
}

/** The colours of a pull request's state on a card (as GitHub shows them). */
const PR_STATE_STYLE: Record<string, string> = {
  open: "bg-emerald-50 text-emerald-800",
  merged: "bg-violet-50 text-violet-800",
  closed: "bg-red-50 text-red-800",
};
