import { repoRole, requireRepoPermission, requireViewer, visibleRepositoryName } from "../auth/authorize";
import { instanceConfig } from "../auth/instance-config";
import type { Viewer } from "../auth/viewer";
import { ForbiddenError, NotFoundError } from "../errors";
import { approverNeeds, reachesApproval } from "../triggers/approver-role";
import { itemLaneFacts } from "../store/reads/board-lanes";
import { repoOfCycleBudget } from "../store/metering/budget-holds";
import { planMove } from "./lanes";
import { authorizeRun } from "./run-access";
import { runSummary } from "./run-detail";
import type { DashboardContext } from "./services";

/**
 * The dashboard's actions — one code path for each, used by the JSON API (and so by the UI's
 * buttons). Each authorizes the viewer against GitHub (write access to the repository) and
 * calls one service; the services' typed errors (409 state, 404, 400) pass through untouched.
 */

async function onRun<T>(ctx: DashboardContext, viewer: Viewer | null, runId: string, act: (actor: string) => Promise<T>) {
  const { who } = await authorizeRun(ctx.db, viewer, runId, "write");
  await act(who.login);
  return { ok: true as const, run: await runSummary(ctx.db, runId) };
}

/** Approving takes the Run's Loop's `trigger_permission`, not only write (approver-role.ts). */
export async function approveRun(ctx: DashboardContext, viewer: Viewer | null, runId: string) {
  const { who, repo } = await authorizeRun(ctx.db, viewer, runId, "write");
  const [role, needs] = await Promise.all([repoRole(who, repo), approverNeeds(ctx.db, runId)]);
  if (!reachesApproval(role, needs)) {
    throw new ForbiddenError("permission_denied", `Approving this Run takes ${needs} access to ${repo} on GitHub, its Loop's trigger_permission (you have ${role} access).`, { repo, need: needs, role });
  }
  await ctx.services.approveRun(runId, who.login);
  return { ok: true as const, run: await runSummary(ctx.db, runId) };
}

export const retryRun = (ctx: DashboardContext, viewer: Viewer | null, runId: string) =>
  onRun(ctx, viewer, runId, (actor) => ctx.services.retryRun(runId, actor));

export const editAndRetryRun = (ctx: DashboardContext, viewer: Viewer | null, runId: string, amendment: { prompt?: string; agent?: string }) =>
  onRun(ctx, viewer, runId, (actor) => ctx.services.editAndRetryRun(runId, actor, amendment));

export const cancelRun = (ctx: DashboardContext, viewer: Viewer | null, runId: string) =>
  onRun(ctx, viewer, runId, (actor) => ctx.services.cancelRun(runId, actor));

/** Push and Discard of held commits: the viewer's write permission asked of GitHub afresh, by the viewer's GitHub id (authorizeRun). */
export const pushReviewed = (ctx: DashboardContext, viewer: Viewer | null, runId: string) =>
  onRun(ctx, viewer, runId, (actor) => ctx.services.pushReviewed(runId, actor));

export const discardReviewed = (ctx: DashboardContext, viewer: Viewer | null, runId: string) =>
  onRun(ctx, viewer, runId, (actor) => ctx.services.discardReviewed(runId, actor));

export const resolveFailure = (ctx: DashboardContext, viewer: Viewer | null, runId: string) =>
  onRun(ctx, viewer, runId, (actor) => ctx.services.resolveFailure(runId, actor));

export const intervene = (ctx: DashboardContext, viewer: Viewer | null, runId: string, input: { attemptId: string; text: string }) =>
  onRun(ctx, viewer, runId, (actor) => ctx.services.intervene(runId, actor, input));

export async function setLoopPaused(ctx: DashboardContext, viewer: Viewer | null, input: { repo: string; loop: string; paused: boolean }) {
  const who = await requireRepoPermission(viewer, input.repo, "write");
  await ctx.services.setLoopPaused(input.repo, input.loop, input.paused, who.login);
  return { ok: true as const, repo: input.repo, loop: input.loop, paused: input.paused };
}

/** "Run Loop X on #N now": a writer's ask; 201 with the Run, 202 when it queues behind a running one. */
export async function dispatchLoop(ctx: DashboardContext, viewer: Viewer | null, input: { repo: string; loop: string; number: number }) {
  const who = await requireRepoPermission(viewer, input.repo, "write");
  const outcome = await ctx.services.dispatchLoop({ ...input, actor: { login: who.login, permission: await repoRole(who, input.repo) } });
  if (outcome.tag === "Queued") return { status: 202, body: { ok: true as const, queuedBehind: outcome.behind } };
  return { status: 201, body: { ok: true as const, run: await runSummary(ctx.db, outcome.runId) } };
}

/** "Check config now": a writer's ask to read the repository's `.github/atelier.yml` at once. */
export async function checkConfig(ctx: DashboardContext, viewer: Viewer | null, input: { repo: string }) {
  const who = await requireRepoPermission(viewer, input.repo, "write");
  return { ok: true as const, ...(await ctx.services.checkConfig(input.repo, who.login)) };
}

export async function resetCycleBudget(ctx: DashboardContext, viewer: Viewer | null, input: { itemKey: string }) {
  const who = requireViewer(viewer);
  const budget = await repoOfCycleBudget(ctx.db, input.itemKey);
  // authorization before lookup: a budget of a repository the viewer cannot see (by its GitHub id) does not exist for them
  const repo = budget ? await visibleRepositoryName(who, budget.repositoryId, budget.repo) : null;
  if (!repo) throw new NotFoundError("budget_not_found", `There is no cycle budget for ${input.itemKey}.`);
  await requireRepoPermission(who, repo, "write");
  const result = await ctx.services.resetCycleBudget(input.itemKey, who.login);
  return { ok: true as const, itemKey: input.itemKey, result };
}

export async function moveCard(ctx: DashboardContext, viewer: Viewer | null, input: { repo: string; number: number; lane: string }) {
  const who = await requireRepoPermission(viewer, input.repo, "write");
  const item = await itemLaneFacts(ctx.db, input.repo, input.number);
  if (!item) throw new NotFoundError("item_not_found", `Atelier has not seen ${input.repo}#${input.number} yet.`);
  const { lanes } = (await instanceConfig()).board;
  const plan = planMove(lanes, item, input.lane);
  if (plan.add.length || plan.remove.length) {
    await ctx.services.moveCard({ repo: input.repo, number: input.number, add: plan.add, remove: plan.remove, actor: who.login, lane: plan.lane.name });
  }
  return { ok: true as const, repo: input.repo, number: input.number, lane: plan.lane.name, add: plan.add, remove: plan.remove };
}
