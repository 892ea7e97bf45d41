import type { Redis } from "ioredis";
import { loadGitHubAppSettings, type GitHubAppSettings } from "../github/app-settings";
import { createRedis, instanceKeyPrefix } from "../config/redis";
import type { InstanceConfig } from "../config/roster";
import { createGitHubApp, type GitHubApp } from "../github/app-client";
import { gitHubHost } from "../github/github-user-api";
import type { Log } from "../github/log";
import { redisRateBlocks } from "../github/redis-rate-blocks";
import { admission } from "../metering/admission";
import type { MirrorDeps } from "../mirror/sync-run";
import type { OperatorDeps } from "../runner/operator";
import type { RecheckCondition } from "../runner/runner-deps";
import { publicUrl } from "../setup/public-url";
import { getDb, type Db } from "../store/kernel/db";
import type { Admission } from "../store/runs/claim";
import { loopConditionHolds } from "../triggers/condition-holds";
import { createTriggerDeps, type TriggerDeps } from "../triggers/deps";
import { pollIntervals } from "../triggers/poll-interval";
import type { WorkQueue } from "../work/work-queue";

/**
 * The one place a process's parts are put together (the worker, the web process's dashboard
 * services and webhook route, the chaos web entry): the database, Redis, the GitHub App, the
 * roster, the admission gate, the trigger deps, the `if:` re-check, the operator and the
 * mirror's deps. A process gives only what it alone knows — its job system, its log, how it
 * reads the roster, whether Redis may make it wait — so no two processes can assemble them
 * differently (the check-run buttons once acted without the quota gate). Nothing connects
 * before it is first asked for: a web page render opens no Redis and no App.
 */

/** A work queue the wiring owns, and closes. */
export interface OwnedWorkQueue extends WorkQueue {
  close(): Promise<void>;
}

export interface WiringInput<Q extends OwnedWorkQueue> {
  log: Log;
  /** The process's job system (jobs/queues.ts), built on first use. */
  workQueue: (parts: { db: Db; roster: InstanceConfig }) => Q;
  /** The instance config: read once at start (the worker) or re-read (the web process's instanceConfig). */
  roster: () => Promise<InstanceConfig>;
  /** A Redis command fails after one reconnection instead of waiting (the web process: a request must be answered). */
  failFast: boolean;
  /**
   * Where the Run pages that check runs and comments link to are; default the instance's
   * (lib/setup/public-url.ts: ATELIER_PUBLIC_URL, else http://localhost:PORT), the address the
   * App's webhook and setup callback are registered under, for every process alike.
   */
  publicUrl?: string;
  /** Default the process's (getDb). */
  db?: Db;
  /** The runner's Redis key prefix; default the instance's (ATELIER_REDIS_PREFIX). */
  keyPrefix?: string;
  /** Default the App's configured settings (the environment, the sandbox file, the database). */
  appSettings?: () => Promise<GitHubAppSettings>;
}

export interface Wiring<Q extends OwnedWorkQueue> {
  db: Db;
  log: Log;
  keyPrefix: string;
  /** The admission gate (quotas) of every open and start of this process. */
  admission: Admission;
  /** The Loop's `if:` read again on GitHub (a closed Run's queued Event opens only if it holds). */
  recheckCondition: RecheckCondition;
  roster(): Promise<InstanceConfig>;
  /** The command connection (control channels, shared rate-limit blocks). */
  redis(): Redis;
  workQueue(): Promise<Q>;
  /** The App; a failure to build it is not kept (the next ask tries again). */
  github(): Promise<GitHubApp>;
  /** What polling, Hints, schedules, dispatch and the config check need, always with the gate. */
  triggerDeps(): Promise<TriggerDeps>;
  /** The one operator of every door (THREATS.md attack 15): the dashboard, the JSON API, the check-run buttons. */
  operator(): Promise<OperatorDeps>;
  /** The check runs' and comments' deps. */
  mirror: MirrorDeps;
  /** Closes what was opened: the work queue and Redis (not the database, which is the process's). */
  close(): Promise<void>;
}

export function createWiring<Q extends OwnedWorkQueue>(input: WiringInput<Q>): Wiring<Q> {
  const db = input.db ?? getDb();
  const { log } = input;
  const keyPrefix = input.keyPrefix ?? instanceKeyPrefix();
  let redis: Redis | null = null;
  let queue: Promise<Q> | null = null;
  let app: Promise<GitHubApp> | null = null;
  let triggers: { app: GitHubApp; queue: Q; roster: InstanceConfig; deps: TriggerDeps } | null = null;

  const gate = admission({ onRefusal: (event, refusal) => log.info({ event: event.id, token: refusal.token }, "open refused") });

  const commandRedis = (): Redis => {
    if (!redis) {
      redis = createRedis(undefined, { failFast: input.failFast });
      redis.on("error", () => {
        /* ioredis reconnects; a command meanwhile fails with its own error */
      });
    }
    return redis;
  };
  const workQueue = (): Promise<Q> => {
    const built = (queue ??= input.roster().then((roster) => input.workQueue({ db, roster })));
    built.catch(() => {
      if (queue === built) queue = null;
    });
    return built;
  };
  const github = (): Promise<GitHubApp> => {
    const built = (app ??= (input.appSettings ?? (() => loadGitHubAppSettings({ db })))().then((settings) =>
      createGitHubApp(settings, { log, sharedRateBlocks: redisRateBlocks(commandRedis(), keyPrefix) }),
    ));
    built.catch(() => {
      if (app === built) app = null;
    });
    return built;
  };
  // one set of trigger deps while the App, the queue and the roster stay (the web process re-reads the roster)
  const triggerDeps = async (): Promise<TriggerDeps> => {
    const [a, q, roster] = await Promise.all([github(), workQueue(), input.roster()]);
    if (triggers?.app !== a || triggers.queue !== q || triggers.roster !== roster) {
      const deps = createTriggerDeps({ db, github: a, workQueue: q, roster, log, admission: gate, pollIntervals: pollIntervals(roster.pollIntervalSeconds) });
      triggers = { app: a, queue: q, roster, deps };
    }
    return triggers.deps;
  };
  // a check that cannot run counts as true (continueWithNewest): the next poll revokes, nothing is lost
  const recheckCondition: RecheckCondition = async (subject) => loopConditionHolds(await triggerDeps(), subject);

  return {
    db,
    log,
    keyPrefix,
    admission: gate,
    recheckCondition,
    roster: input.roster,
    redis: commandRedis,
    workQueue,
    github,
    triggerDeps,
    async operator() {
      const [q, roster] = await Promise.all([workQueue(), input.roster()]);
      const apiHost = async () => gitHubHost((await github()).settings.baseUrl);
      return { db, redis: commandRedis(), workQueue: q, roster, admission: gate, keyPrefix, recheckCondition, apiHost };
    },
    mirror: { db, github: async (id) => (await github()).installationOctokit(id), publicUrl: input.publicUrl ?? publicUrl() },
    async close() {
      const q = queue;
      queue = null;
      if (q) await (await q.catch(() => null))?.close();
      const r = redis;
      redis = null;
      if (r) await r.quit().catch(() => undefined);
    },
  };
}
