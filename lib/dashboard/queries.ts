import { hasRepoPermission, requireViewer } from "../auth/authorize";
import { instanceConfig } from "../auth/instance-config";
import type { Viewer } from "../auth/viewer";
import { agentsOfRuns, loopNamesOf } from "../store/reads/filter-choices";
import { loadAudit } from "./audit";
import { loadBoard, type Board } from "./board";
import { loadBudgets, type BudgetView } from "./budgets";
import { loadLoops, type LoopView, type RepositoryConfigView } from "./loops-page";
import { countNeeds, loadNeedsYou, type NeedsYou } from "./needs-you";
import { loadInstallations, type InstallationView } from "./repositories";
import { authorizeRun } from "./run-access";
import { loadRunPage, type RunListFilter, type RunPage } from "./runs-list";
import { loadRunDetail, type RunDetail } from "./run-detail";
import { narrow, scopeRepos } from "../auth/viewer-scope";
import type { DashboardContext } from "./services";

/** Reads need only the database. */
type ReadContext = Pick<DashboardContext, "db">;

/**
 * The dashboard's reads, for the pages and the JSON API alike: each resolves the viewer's
 * scope (the repositories they can see), reads one model, and says where they may act
 * (`writable`: the repositories they have write access to).
 */

/** The repositories of `repos` the viewer may act on (GitHub roles, cached 60 s). */
export async function writableRepos(viewer: Viewer, repos: Iterable<string>): Promise<string[]> {
  const list = [...new Set(repos)];
  if (viewer.admin) return list;
  const ok = await Promise.all(list.map((r) => hasRepoPermission(viewer, r, "write").catch(() => false)));
  return list.filter((_, i) => ok[i]);
}

export interface BoardPage {
  board: Board;
  repos: string[];
  loops: string[];
  filter: { repo: string | null; loop: string | null };
  writable: string[];
}

export async function getBoard(
  ctx: ReadContext,
  viewer: Viewer | null,
  q: { repo?: string; loop?: string; perLane?: number } = {},
): Promise<BoardPage> {
  const who = requireViewer(viewer);
  const [scope, config] = await Promise.all([scopeRepos(ctx.db, who), instanceConfig()]);
  const repos = narrow(scope, q.repo);
  const [board, loops] = await Promise.all([
    loadBoard(ctx.db, { repos, lanes: config.board.lanes, loop: q.loop ?? null, perLane: q.perLane }),
    loopNamesOf(ctx.db, scope),
  ]);
  const shown = new Set(board.lanes.flatMap((l) => l.cards.map((c) => c.repo)));
  return { board, repos: scope, loops, filter: { repo: q.repo ?? null, loop: q.loop ?? null }, writable: await writableRepos(who, shown) };
}

export interface RunsListPage extends RunPage {
  /** the filters' choices: the visible repositories, their Loops and agents */
  repos: string[];
  loops: string[];
  agents: string[];
}

/** The Runs list: a page of the visible Runs, as filtered, with the filters' choices. */
export async function getRuns(
  ctx: ReadContext,
  viewer: Viewer | null,
  q: RunListFilter & { repo?: string; cursor?: string; limit?: number } = {},
): Promise<RunsListPage> {
  const who = requireViewer(viewer);
  const scope = await scopeRepos(ctx.db, who);
  const repos = narrow(scope, q.repo);
  const [page, loops, agents] = await Promise.all([
    loadRunPage(ctx.db, repos, { loop: q.loop, agent: q.agent, state: q.state, q: q.q }, { cursor: q.cursor, limit: q.limit }),
    loopNamesOf(ctx.db, scope),
    agentsOfRuns(ctx.db, scope),
  ]);
  return { ...page, repos: scope, loops, agents };
}

export async function getRun(ctx: ReadContext, viewer: Viewer | null, runId: string): Promise<RunDetail & { canAct: boolean }> {
  const { who, repo } = await authorizeRun(ctx.db, viewer, runId, "read");
  const config = await instanceConfig();
  const [detail, canAct] = await Promise.all([
    loadRunDetail(ctx.db, runId, { canIntervene: (agent) => config.agents[agent]?.intervene ?? false }),
    hasRepoPermission(who, repo, "write").catch(() => false),
  ]);
  return { ...detail, canAct };
}

/** Authorizes a transcript stream: read access to the Run's repository. */
export async function authorizeTranscript(ctx: ReadContext, viewer: Viewer | null, runId: string): Promise<void> {
  await authorizeRun(ctx.db, viewer, runId, "read");
}

export async function getNeedsYou(ctx: ReadContext, viewer: Viewer | null, q: { repo?: string } = {}): Promise<NeedsYou & { writable: string[] }> {
  const who = requireViewer(viewer);
  const repos = narrow(await scopeRepos(ctx.db, who), q.repo);
  const needs = await loadNeedsYou(ctx.db, repos);
  return { ...needs, writable: await writableRepos(who, needs.needs.map((n) => n.repo)) };
}

/** The count the navigation shows; 0 when signed out or GitHub cannot be asked. */
export async function getNeedsCount(ctx: ReadContext, viewer: Viewer | null): Promise<number> {
  if (!viewer) return 0;
  try {
    return (await countNeeds(ctx.db, await scopeRepos(ctx.db, viewer))).total;
  } catch {
    return 0;
  }
}

export async function getLoops(
  ctx: ReadContext,
  viewer: Viewer | null,
  q: { repo?: string } = {},
): Promise<{ repositories: RepositoryConfigView[]; loops: LoopView[]; writable: string[] }> {
  const who = requireViewer(viewer);
  const { repositories, loops } = await loadLoops(ctx.db, narrow(await scopeRepos(ctx.db, who), q.repo));
  return { repositories, loops, writable: await writableRepos(who, repositories.map((r) => r.repo)) };
}

export async function getBudgets(ctx: ReadContext, viewer: Viewer | null, q: { repo?: string } = {}): Promise<{ budgets: BudgetView[]; writable: string[] }> {
  const who = requireViewer(viewer);
  const budgets = await loadBudgets(ctx.db, narrow(await scopeRepos(ctx.db, who), q.repo));
  return { budgets, writable: await writableRepos(who, budgets.map((b) => b.repo)) };
}

export async function getAudit(ctx: ReadContext, viewer: Viewer | null, q: { repo?: string; before?: string; limit?: number } = {}) {
  const who = requireViewer(viewer);
  return loadAudit(ctx.db, narrow(await scopeRepos(ctx.db, who), q.repo), { before: q.before, limit: q.limit });
}

export async function getInstallations(ctx: ReadContext, viewer: Viewer | null): Promise<{ installations: InstallationView[] }> {
  return { installations: await loadInstallations(ctx.db, requireViewer(viewer)) };
}

export function getMe(viewer: Viewer | null) {
  const who = requireViewer(viewer);
  return { id: who.id, login: who.login, name: who.name, avatarUrl: who.avatarUrl, admin: who.admin };
}
