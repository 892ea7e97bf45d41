import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { instanceConfig } from "../../lib/auth/instance-config";
import { loadGitHubAppSettings } from "../../lib/config/github-app";
import { createRedis, instanceKeyPrefix } from "../../lib/config/redis";
import type { DashboardContext, DashboardServices } from "../../lib/dashboard/services";
import { createGitHubApp, type GitHubApp } from "../../lib/github/app";
import { redisRateBlocks } from "../../lib/github/redis-rate-blocks";
import { createLog } from "../../lib/github/log";
import * as operator from "../../lib/runner/operator";
import { resetCycleBudget } from "../../lib/store/cycle-budget";
import type { Db } from "../../lib/store/db";
import { moveBoardCard } from "../../lib/triggers/board-move";
import { admission } from "../../lib/metering/admission";
import { operatorDeps } from "../../lib/triggers/operator-deps";
import { setLoopPaused } from "../../lib/triggers/loops";
import { createTriggerDeps } from "../../lib/triggers/deps";
import { checkConfigNow } from "../../lib/triggers/check-config";
import { dispatchLoop } from "../../lib/triggers/dispatch";
import { db } from "./db";

/**
 * The services behind the dashboard's actions and the check-run buttons (the webhook route
 * takes the same): the runner's operator services (the guarded
 * transition, then the Run's job enqueued or its running agent stopped), the triggers' Loop
 * pause and Board move (labels written on GitHub as the installation, then a Hint), and the
 * store's cycle budget reset. Their connections (Redis, BullMQ, the App) open on the first
 * action, never at build time or on a page render.
 */

export interface LiveServicesOptions {
  /** BullMQ key prefix (default the instance's; tests use their own). */
  bullPrefix?: string;
  /** The runner's Redis key prefix (default the instance's, ATELIER_REDIS_PREFIX). */
  keyPrefix?: string;
}

export interface LiveServices {
  services: DashboardServices;
  close(): Promise<void>;
}

export function createLiveServices(database: Db, options: LiveServicesOptions = {}): LiveServices {
  let redis: ReturnType<typeof createRedis> | null = null;
  let queue: Promise<BullWorkQueue> | null = null;
  let app: Promise<GitHubApp> | null = null;
  const keyPrefix = options.keyPrefix ?? instanceKeyPrefix();

  const workQueue = () =>
    (queue ??= instanceConfig().then(
      (config) =>
        new BullWorkQueue({
          connection: bullConnection(undefined, { failFast: true }),
          db: database,
          pollIntervalSeconds: config.pollIntervalSeconds,
          ...(options.bullPrefix ? { prefix: options.bullPrefix } : {}),
        }),
    ));
  const commandRedis = () => {
    if (!redis) {
      redis = createRedis(undefined, { failFast: true });
      redis.on("error", () => {
        /* ioredis reconnects; an action meanwhile fails with its own error */
      });
    }
    return redis;
  };
  const github = () => {
    app ??= loadGitHubAppSettings({ db: database }).then((settings) =>
      createGitHubApp(settings, { log: createLog("atelier.dashboard"), sharedRateBlocks: redisRateBlocks(commandRedis(), keyPrefix) }),
    );
    app.catch(() => (app = null));
    return app;
  };
  const gate = admission();
  const triggerDeps = async () => {
    const [app, queue, roster] = await Promise.all([github(), workQueue(), instanceConfig()]);
    return createTriggerDeps({ db: database, github: app, workQueue: queue, roster, admission: gate });
  };
  // the one operator of every door (lib/triggers/operator-deps.ts): the gate and the `if:` re-check
  const deps = async (): Promise<operator.OperatorDeps> => {
    const [queue, roster] = await Promise.all([workQueue(), instanceConfig()]);
    return operatorDeps({ db: database, redis: commandRedis(), workQueue: queue, roster, admission: gate, keyPrefix, github });
  };

  return {
    services: {
      approveRun: async (runId, actor) => operator.approveRun(await deps(), runId, actor),
      retryRun: async (runId, actor) => operator.retryRun(await deps(), runId, actor),
      editAndRetryRun: async (runId, actor, amendment) => operator.editAndRetryRun(await deps(), runId, actor, amendment),
      cancelRun: async (runId, actor) => operator.cancelRun(await deps(), runId, actor),
      resolveFailure: (runId, actor) => operator.resolveFailure({ db: database }, runId, actor),
      intervene: async (runId, actor, input) => operator.intervene(await deps(), runId, actor, input),
      resetCycleBudget: (itemKey, actor) => resetCycleBudget(database, itemKey, actor),
      setLoopPaused: (repo, loop, paused, actor) => setLoopPaused(database, repo, loop, paused, actor),
      dispatchLoop: async (input) => dispatchLoop(await triggerDeps(), input),
      checkConfig: async (repo, actor) => checkConfigNow(await triggerDeps(), repo, actor),
      moveCard: async (move) => moveBoardCard({ db: database, github: await github(), workQueue: await workQueue() }, move),
    },
    async close() {
      if (queue) await (await queue).close();
      if (redis) await redis.quit().catch(() => undefined);
    },
  };
}

let shared: LiveServices | undefined;
let override: DashboardServices | undefined;

export function dashboardContext(): DashboardContext {
  const database = db();
  shared ??= createLiveServices(database);
  return { db: database, services: override ?? shared.services };
}

/** Tests put their own services in (the live ones under a test prefix, a double for the agent…). */
export function setDashboardServicesForTests(services: DashboardServices | undefined): void {
  override = services;
}
