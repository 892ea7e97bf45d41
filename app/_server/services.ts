import type { DashboardContext, DashboardServices } from "../../lib/dashboard/services";
import type { Wiring, OwnedWorkQueue } from "../../lib/instance/wiring";
import * as operator from "../../lib/runner/operator";
import * as review from "../../lib/runner/push-or-discard";
import { appRunnerGitHub } from "../../lib/runner/app-github";
import type { Db } from "../../lib/store/kernel/db";
import { moveBoardCard } from "../../lib/triggers/board-move";
import { answerBudgetAsk } from "../../lib/triggers/budget-reset";
import { setLoopPaused } from "../../lib/triggers/loop-status";
import { checkConfigNow } from "../../lib/triggers/check-config";
import { dispatchLoop } from "../../lib/triggers/dispatch";
import { db } from "./db";
import { createWebWiring, webWiring, type WebWiringOptions } from "./wiring";

/**
 * The services behind the dashboard's actions and the check-run buttons (the webhook route
 * takes the same), over the process's wiring (lib/instance/wiring.ts): the runner's operator
 * services (the guarded transition, then the Run's job enqueued or its running agent
 * stopped), the triggers' Loop pause and Board move (labels written on GitHub as the
 * installation, then a Hint), and the cycle budget reset (the Item and its waiting comments
 * judged again at once). Their connections (Redis,
 * BullMQ, the App) open on the first action, never at build time or on a page render.
 */
export function servicesOf(wiring: Wiring<OwnedWorkQueue>): DashboardServices {
  const { db: database } = wiring;
  return {
    approveRun: async (runId, actor) => operator.approveRun(await wiring.operator(), runId, actor),
    retryRun: async (runId, actor) => operator.retryRun(await wiring.operator(), runId, actor),
    editAndRetryRun: async (runId, actor, amendment) => operator.editAndRetryRun(await wiring.operator(), runId, actor, amendment),
    cancelRun: async (runId, actor) => operator.cancelRun(await wiring.operator(), runId, actor),
    resolveFailure: (runId, actor) => operator.resolveFailure({ db: database }, runId, actor),
    pushReviewed: async (runId, actor) => review.pushReviewed(await reviewDeps(wiring), runId, actor),
    discardReviewed: async (runId, actor) => review.discardReviewed(await reviewDeps(wiring), runId, actor),
    intervene: async (runId, actor, input) => operator.intervene(await wiring.operator(), runId, actor, input),
    resetCycleBudget: async (itemKey, actor) => answerBudgetAsk({ db: database, workQueue: await wiring.workQueue() }, itemKey, actor),
    setLoopPaused: (repo, loop, paused, actor) => setLoopPaused(database, repo, loop, paused, actor),
    dispatchLoop: async (input) => dispatchLoop(await wiring.triggerDeps(), input),
    checkConfig: async (repo, actor) => checkConfigNow(await wiring.triggerDeps(), repo, actor),
    moveCard: async (move) => moveBoardCard({ db: database, github: await wiring.github(), workQueue: await wiring.workQueue() }, move),
  };
}

/** The operator's deps and the App's GitHub, for a writer's Push or Discard of held commits. */
async function reviewDeps(wiring: Wiring<OwnedWorkQueue>): Promise<review.ReviewDeps> {
  const [deps, app] = await Promise.all([wiring.operator(), wiring.github()]);
  return { ...deps, github: appRunnerGitHub(app, wiring.db) };
}

export interface LiveServices {
  services: DashboardServices;
  close(): Promise<void>;
}

/** Services over a wiring of their own (tests: their own database and prefixes). */
export function createLiveServices(database: Db, options: WebWiringOptions = {}): LiveServices {
  const wiring = createWebWiring(database, options);
  return { services: servicesOf(wiring), close: () => wiring.close() };
}

let shared: DashboardServices | undefined;
let override: DashboardServices | undefined;

export function dashboardContext(): DashboardContext {
  shared ??= servicesOf(webWiring());
  return { db: db(), services: override ?? shared };
}

/** Tests put their own services in (the live ones under a test prefix, a double for the agent…). */
export function setDashboardServicesForTests(services: DashboardServices | undefined): void {
  override = services;
}
