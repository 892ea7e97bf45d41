import { createHash } from "node:crypto";
import type { DashboardServices } from "../dashboard/services";
import { loadNeedsYou } from "../dashboard/needs-you";
import { AtelierError } from "../errors";
import type { RepoRole } from "../github/github-user-api";
import { callGitHub, repoParams, type GitHubClient } from "../mirror/github-client";
import { canOperateRuns, collaboratorRole } from "../mirror/repo-permission";
import { runPageUrl } from "../mirror/run-presentation";
import type { MirrorDeps } from "../mirror/sync-run";
import {
  auditDashboardTick,
  claimDashboardIssue,
  claimDashboardTick,
  closeDashboardIssueRow,
  dashboardRepository,
  findDashboardIssue,
  releaseDashboardIssue,
  releaseDashboardTick,
  saveDashboardIssue,
  type DashboardRepository,
} from "../store/github/dashboard-issues";
import { approverNeeds, reachesApproval } from "../triggers/approver-role";
import { followRepository } from "../github/installation-sync";
import { closedDashboardIssueBody, DASHBOARD_ISSUE_TITLE, dashboardIssueBody, ticksOf, type TickSubject } from "./dashboard-issue-body";

/**
 * A repository's dashboard issue (ADR 0088), as Renovate keeps one: opened by the App when the
 * repository's `.github/atelier.yml` says `dashboard_issue: true`, rewritten whenever what waits
 * on people there changes (its body is Needs you's approvals, failures, budget asks and config
 * errors of that repository), and read back when someone edits it: a box ticked by a person with
 * write access (asked of GitHub at that moment) acts through the dashboard's own operator,
 * once per tick, audited; a tick by anyone else is refused and the App writes its body back.
 * The issue is never an Item for the Loops (lib/triggers leave it alone).
 */

/** What keeping the issue needs: the mirror's GitHub clients, the database, the Run pages' base. */
export type DashboardIssueDeps = MirrorDeps;

/** The operator actions a tick takes: the dashboard's own (the admission gate, the `if:` re-check, the audit). */
export type TickActions = Pick<DashboardServices, "approveRun" | "retryRun" | "resetCycleBudget" | "checkConfig">;

export type SyncOutcome = { tag: "Created" | "Updated" | "Reopened" | "Unchanged"; number: number } | { tag: "Busy" };

const needsYouUrl = (publicUrl: string) => `${publicUrl.replace(/\/+$/, "")}/needs-you`;

async function bodyFor(deps: DashboardIssueDeps, repo: DashboardRepository): Promise<string> {
  const { needs } = await loadNeedsYou(deps.db, [repo.full_name]);
  return dashboardIssueBody(needs, (runId) => runPageUrl(deps.publicUrl, runId), needsYouUrl(deps.publicUrl));
}

async function writeBody(client: GitHubClient, repo: DashboardRepository, number: number, body: string, state?: "open" | "closed"): Promise<void> {
  await callGitHub("update the dashboard issue", () =>
    client.request("PATCH /repos/{owner}/{repo}/issues/{issue_number}", { ...repoParams(repo.full_name), issue_number: number, body, ...(state ? { state } : {}) }),
  );
}

/**
 * Opens the repository's issue, or writes its body when what it lists changed since the App
 * last wrote it (`force`: write it whatever the App wrote last — after someone edited it).
 */
export async function syncDashboardIssue(deps: DashboardIssueDeps, repo: DashboardRepository, options: { force?: boolean } = {}): Promise<SyncOutcome> {
  const body = await bodyFor(deps, repo);
  const row = await findDashboardIssue(deps.db, repo.id);
  if (row?.number === 0) return { tag: "Busy" };
  if (row && !row.closed && row.body === body && !options.force) return { tag: "Unchanged", number: row.number };
  const client = await deps.github(repo.installation_id);
  if (row) {
    // turned on again after the App closed it: the same issue, reopened
    await writeBody(client, repo, row.number, body, row.closed ? "open" : undefined);
    await saveDashboardIssue(deps.db, repo.id, row.number, body);
    return { tag: row.closed ? "Reopened" : "Updated", number: row.number };
  }
  if (!(await claimDashboardIssue(deps.db, repo.id))) return { tag: "Busy" };
  try {
    const { data } = await callGitHub("open the dashboard issue", () =>
      client.request("POST /repos/{owner}/{repo}/issues", { ...repoParams(repo.full_name), title: DASHBOARD_ISSUE_TITLE, body }),
    );
    await saveDashboardIssue(deps.db, repo.id, Number(data.number), body);
    return { tag: "Created", number: Number(data.number) };
  } catch (err) {
    await releaseDashboardIssue(deps.db, repo.id);
    throw err;
  }
}

/**
 * Closes the issue of a repository whose `.github/atelier.yml` turned `dashboard_issue` off,
 * saying so in its body (no box is left to tick). Its row stays, closed: the issue is still no
 * Item for the Loops, and turning it on again reopens it.
 */
export async function closeDashboardIssue(deps: DashboardIssueDeps, repo: DashboardRepository, number: number): Promise<void> {
  const body = closedDashboardIssueBody(needsYouUrl(deps.publicUrl));
  await writeBody(await deps.github(repo.installation_id), repo, number, body, "closed");
  await closeDashboardIssueRow(deps.db, repo.id, body);
}

/** The fields of an `issues` or `issue_comment` webhook payload this reads. */
export interface IssueEventPayload {
  action: string;
  issue: { number: number; body?: string | null };
  changes?: { body?: { from?: string | null } } | null;
  /** the repository as GitHub names it at delivery: its id is what the issue is looked up by */
  repository: { id?: number; full_name: string };
  installation?: { id: number };
  sender: { login: string };
}

export type TickOutcome =
  | { tag: "Ignored" }
  | { tag: "Refused"; token: "needs_write_permission"; login: string; ticks: TickSubject[] }
  | { tag: "Acted"; done: TickSubject[]; refused: { tick: TickSubject; token: string }[] };

function perform(actions: TickActions, tick: TickSubject, login: string, repo: string): Promise<unknown> {
  switch (tick.action) {
    case "approve":
      return actions.approveRun(tick.target, login);
    case "retry":
      return actions.retryRun(tick.target, login);
    case "reset_budget":
      return actions.resetCycleBudget(tick.target, login);
    case "check_config":
      return actions.checkConfig(repo, login);
  }
}

/** Approving takes the Loop's trigger_permission, as on the dashboard and the check run. */
async function mayAct(deps: DashboardIssueDeps, tick: TickSubject, role: RepoRole): Promise<boolean> {
  return tick.action !== "approve" || reachesApproval(role, await approverNeeds(deps.db, tick.target));
}

/**
 * The dashboard repository a delivery is about, by the repository id GitHub gives: a repository
 * that took the name of a dashboard repository is not it (THREATS.md attack 23). When GitHub names
 * the id otherwise than Atelier does (a rename or transfer not heard of yet), the repository is
 * registered under its name now first (ADR 0070), so what is asked of and written to GitHub below
 * goes to this repository, not to whichever holds its old name.
 */
async function dashboardRepositoryOf(deps: DashboardIssueDeps, payload: IssueEventPayload): Promise<DashboardRepository | undefined> {
  const { id, full_name } = payload.repository;
  if (typeof id !== "number") return undefined;
  const repo = await dashboardRepository(deps.db, id);
  if (!repo || repo.full_name === full_name.toLowerCase()) return repo;
  await followRepository(deps.db, payload.installation?.id ?? repo.installation_id, { id, full_name });
  return dashboardRepository(deps.db, id);
}

/**
 * An `issues` or `issue_comment` delivery: null when it is not about a dashboard issue (the
 * triggers take it); otherwise what was done, and the triggers leave it alone. Only an edit of
 * the body can tick: a box the App wrote unticked, unticked before this edit, ticked after it.
 */
export async function onDashboardIssueEvent(
  deps: DashboardIssueDeps & { actions: TickActions },
  event: string,
  payload: IssueEventPayload,
  deliveryId: string | null,
): Promise<TickOutcome | null> {
  const repo = await dashboardRepositoryOf(deps, payload);
  if (!repo) return null;
  const row = await findDashboardIssue(deps.db, repo.id);
  if (!row || row.number !== payload.issue.number) return null;
  if (event !== "issues" || payload.action !== "edited" || !payload.changes?.body) return { tag: "Ignored" };
  const edited = payload.issue.body ?? "";
  const before = payload.changes.body.from ?? "";
  const ticks = ticksOf(row.body, edited).filter((t) => !ticksOf(row.body, before).some((b) => b.action === t.action && b.target === t.target));
  if (!ticks.length) return { tag: "Ignored" };

  const login = payload.sender.login;
  const client = await deps.github(repo.installation_id);
  const role = await collaboratorRole(client, repo.full_name, login);
  if (!canOperateRuns(role)) {
    await writeBody(client, repo, row.number, row.body);
    await auditDashboardTick(deps.db, { actor: login, action: "dashboard_issue_tick_refused", repo: repo.full_name, detail: { issue: row.number, ticks, role, delivery: deliveryId } });
    return { tag: "Refused", token: "needs_write_permission", login, ticks };
  }
  const written = createHash("sha256").update(row.body).digest("hex");
  const done: TickSubject[] = [];
  const refused: { tick: TickSubject; token: string }[] = [];
  for (const tick of ticks) {
    if (!(await mayAct(deps, tick, role))) {
      refused.push({ tick, token: "permission_denied" });
      continue;
    }
    const key = JSON.stringify([repo.id, row.number, tick.action, tick.target, written]);
    if (!(await claimDashboardTick(deps.db, { key, repositoryId: repo.id, subject: `${tick.action}:${tick.target}`, actor: login, deliveryId }))) continue;
    try {
      await perform(deps.actions, tick, login, repo.full_name);
      await auditDashboardTick(deps.db, { actor: login, action: "dashboard_issue_tick", repo: repo.full_name, detail: { issue: row.number, tick, delivery: deliveryId } });
      done.push(tick);
    } catch (err) {
      await releaseDashboardTick(deps.db, key);
      if (!(err instanceof AtelierError) || err.status >= 500) throw err;
      refused.push({ tick, token: err.token });
    }
  }
  if (refused.length) {
    await auditDashboardTick(deps.db, { actor: login, action: "dashboard_issue_tick_refused", repo: repo.full_name, detail: { issue: row.number, refused, role, delivery: deliveryId } });
  }
  // what acted leaves the list; what did not comes back unticked
  await syncDashboardIssue(deps, repo, { force: true });
  return { tag: "Acted", done, refused };
}
