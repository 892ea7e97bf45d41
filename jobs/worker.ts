// The worker entry (`npm run worker`): every BullMQ worker of Atelier in one process, wired to
// the product in lib/. Run as many as you like on as many hosts as you like: they share one
// Postgres (the truth) and one Redis (queues, leases), and each takes up to
// max_concurrent_attempts Attempts at a time.
import { resolve } from "node:path";
import { agentSecretNames, loadInstanceConfig } from "../lib/config/roster";
import { atelierVersion } from "../lib/config/version";
import { createLog } from "../lib/github/log";
import { healthPortFrom, startHealthServer } from "../lib/health/health-server";
import { snapshotStoreFromEnv } from "../lib/executor/environment/snapshot-store";
import { createWiring } from "../lib/instance/wiring";
import { quotaBlockedItems } from "../lib/metering/quota-refusals";
import { keepDashboardIssues } from "../lib/notify/dashboard-issue-keeper";
import { targetPolicyFor } from "../lib/outbound/target-policy";
import { publicUrl } from "../lib/setup/public-url";
import { appRunnerGitHub } from "../lib/runner/app-github";
import { DEFAULT_LEASE_TTL_MS } from "../lib/runner/lease";
import { watchOwnHost } from "../lib/runner/own-host-recovery";
import { startRebuildGuard } from "../lib/runner/rebuild-guard";
import { redisNames } from "../lib/runner/redis-names";
import { createRunnerHost } from "../lib/runner/runner-host";
import { startWorkerHeartbeat, WORKER_STALE_AFTER_MS, workerIdentity } from "../lib/runner/worker-heartbeat";
import { joinRunningInstance } from "../lib/supervisor/running-instance";
import { BullWorkQueue, bullConnection } from "./queues";
import { createAttemptWorker, installShutdownSignals } from "./processors/attempt";
import { createHintWorker } from "./processors/hint";
import { createInstallationWorker } from "./processors/installation";
import { createMaintenanceWorker, ORPHAN_SWEEP_EVERY_MS, recoverAtStart } from "./processors/maintenance";
import { createMirrorWorker } from "./processors/mirror";
import { createOutboundWorker } from "./processors/outbound";
import { createPollWorker } from "./processors/poll";
import { createScheduleWorker } from "./processors/schedule";
import { rebuildFromPostgres } from "./rebuild-redis";

/** How often Events blocked by a quota are hinted again, so they open once the limit lifts. */
const QUOTA_RECHECK_MS = 5 * 60_000;

// started by hand beside `npm start` (the sandbox included): take over the settings it chose
const supervisor = joinRunningInstance(resolve(import.meta.dirname, ".."), process.env);
const instance = await loadInstanceConfig();
// the agents' secrets are masked in the worker's log lines too, beside the instance's own
const log = createLog("atelier.worker", { secrets: Object.values(instance.agents).flatMap((a) => agentSecretNames(a).map((name) => process.env[name])) });
if (supervisor) log.info({ supervisor }, "joining the instance `npm start` runs from this directory");
const connection = bullConnection();
const wiring = createWiring({
  log,
  roster: async () => instance,
  failFast: false,
  workQueue: ({ db, roster }) => new BullWorkQueue({ connection, db, pollIntervalSeconds: roster.pollIntervalSeconds }),
});
const { db, keyPrefix, admission: gate, recheckCondition } = wiring;
const redis = wiring.redis();
const github = await wiring.github();
const workQueue = await wiring.workQueue();
const triggers = await wiring.triggerDeps();
const workspaceRoot = resolve(process.env.ATELIER_WORKSPACE ?? ".atelier/workspaces");

const runnerGitHub = appRunnerGitHub(github, db);
const host = createRunnerHost(
  { db, redis, workQueue, github: runnerGitHub, recheckCondition, admission: gate, log },
  { workspaceRoot, roster: instance, keyPrefix, transcript: { maxBytes: instance.maxTranscriptBytes }, snapshots: snapshotStoreFromEnv() },
);
const maintenanceDeps = { db, redis, workQueue, recheckCondition, admission: gate, keyPrefix, leaseTtlMs: DEFAULT_LEASE_TTL_MS, staleAfterMs: WORKER_STALE_AFTER_MS, log };

// registered first, so that this host's dead workers (other pids) are known from this one
const identity = workerIdentity(host.context.config.workerId, instance.maxConcurrentAttempts, atelierVersion());
const heartbeat = await startWorkerHeartbeat(db, identity, () => host.running, {
  onError: (err) => log.warn({ err: String(err) }, "worker heartbeat failed; trying again"),
});
await recoverAtStart({ ...maintenanceDeps, github: runnerGitHub }, workspaceRoot, identity);
// and while it lives: a worker of this host whose process is gone is dead for certain
const ownHost = watchOwnHost(maintenanceDeps, identity, ORPHAN_SWEEP_EVERY_MS, (err) => log.warn({ err: String(err) }, "looking for this host's dead workers failed"));
await host.start();
await workQueue.syncSchedulers();
// GET /healthz, /readyz and /metrics on ATELIER_WORKER_HEALTH_PORT (off when unset)
const healthPort = healthPortFrom();
const health = healthPort === null ? null : await startHealthServer({ port: healthPort, version: atelierVersion(), readiness: { db, redis } });

const attempts = createAttemptWorker(connection, host);
const maintenance = await createMaintenanceWorker(connection, { ...maintenanceDeps, retention: instance.retention });
const mirror = await createMirrorWorker(connection, wiring.mirror, { log });
// the repositories' dashboard issues (`dashboard_issue: true`), kept in step with Needs you
const dashboardIssues = await keepDashboardIssues(wiring.mirror, log);
const outbound = await createOutboundWorker(connection, { db, policy: targetPolicyFor(instance), publicUrl: publicUrl() }, { log });
const others = [
  createPollWorker(connection, triggers),
  createHintWorker(connection, triggers),
  createScheduleWorker(connection, triggers),
  createInstallationWorker(connection, { db, github, workQueue, log }),
];

// Redis keeps only what Postgres can rebuild: when its data is gone (FLUSHALL, a new server),
// every scheduler and every open Run's job come back within one guard period
const rebuildGuard = await startRebuildGuard(
  redis,
  redisNames(keyPrefix).rebuiltMarker,
  async () => {
    log.warn({}, "Redis lost its data: rebuilding the schedulers and the open Runs' jobs from Postgres");
    await rebuildFromPostgres({ workQueue, maintenance, mirror, deps: maintenanceDeps });
  },
  { onError: (err) => log.warn({ err: String(err) }, "rebuild after a Redis loss failed; trying again") },
);

const quotaRecheck = setInterval(() => {
  void quotaBlockedItems(db)
    .then((items) => Promise.all(items.map((item) => workQueue.hint(item))))
    .catch((err: unknown) => log.warn({ err: String(err) }, "quota recheck failed"));
}, QUOTA_RECHECK_MS);
quotaRecheck.unref();

installShutdownSignals({
  host,
  workers: [attempts, maintenance, mirror, outbound, ...others],
  log,
  cleanup: async () => {
    clearInterval(quotaRecheck);
    dashboardIssues.close();
    ownHost.stop();
    await heartbeat.stop();
    await health?.close();
    rebuildGuard.stop();
    await wiring.close();
    await db.close();
  },
});
log.info({ slots: instance.maxConcurrentAttempts, workspaceRoot, github: github.settings.baseUrl, healthPort: health?.port ?? null }, "worker started");
