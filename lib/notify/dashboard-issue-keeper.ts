import type { Log } from "../github/log";
import { dashboardIssuesTurnedOff, dashboardRepositories } from "../store/github/dashboard-issues";
import { notificationsOf } from "../store/kernel/notifications";
import { RUN_CHANGED_CHANNEL } from "../store/runs/run-changed";
import { closeDashboardIssue, syncDashboardIssue, type DashboardIssueDeps } from "./dashboard-issue";

/**
 * Keeps every opted-in repository's dashboard issue in step with Needs you: soon after a Run
 * changes (coalesced: one pass for a burst), and on a timer for what changes without a Run (a
 * budget ask, a config error). A pass writes only the bodies that changed, and closes the issue
 * of a repository that turned `dashboard_issue` off.
 */

export const DASHBOARD_SWEEP_EVERY_MS = 30_000;
const AFTER_A_CHANGE_MS = 2_000;

export interface DashboardIssueKeeper {
  /** One pass over the repositories, here and now. */
  syncAll(): Promise<void>;
  close(): void;
}

export async function keepDashboardIssues(deps: DashboardIssueDeps, log: Log, everyMs = DASHBOARD_SWEEP_EVERY_MS): Promise<DashboardIssueKeeper> {
  let running: Promise<void> | null = null;
  const syncAll = (): Promise<void> =>
    (running ??= (async () => {
      for (const repo of await dashboardRepositories(deps.db)) {
        await syncDashboardIssue(deps, repo).catch((err: unknown) => log.warn({ err: String(err), repo: repo.full_name }, "could not update the dashboard issue"));
      }
      for (const { number, ...repo } of await dashboardIssuesTurnedOff(deps.db)) {
        await closeDashboardIssue(deps, repo, number).catch((err: unknown) => log.warn({ err: String(err), repo: repo.full_name }, "could not close the dashboard issue"));
      }
    })().finally(() => {
      running = null;
    }));
  const pass = () => void syncAll().catch((err: unknown) => log.warn({ err: String(err) }, "the dashboard issues' pass failed"));
  const timer = setInterval(pass, everyMs);
  timer.unref();
  let soon: NodeJS.Timeout | null = null;
  const listener = notificationsOf(deps.db).subscribe(RUN_CHANGED_CHANNEL, () => {
    soon ??= setTimeout(() => {
      soon = null;
      pass();
    }, AFTER_A_CHANGE_MS);
  });
  await listener.ready;
  return {
    syncAll,
    close() {
      clearInterval(timer);
      if (soon) clearTimeout(soon);
      listener.close();
    },
  };
}
