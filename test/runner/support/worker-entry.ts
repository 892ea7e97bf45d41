// A worker process for the tests that kill or signal one: the attempts worker wired as the
// worker entry wires it, configured by the environment. Run with `node --import tsx`.
import { createDb } from "../../../lib/store/kernel/db";
import { installShutdownSignals } from "../../../jobs/processors/attempt";
import { recoverOwnHost } from "../../../lib/runner/own-host-recovery";
import { startWorkerHeartbeat, workerIdentity } from "../../../lib/runner/worker-heartbeat";
import { agents, AGENT_ENV, realClaudeAgent, REDIS_URL, startRunner } from "./runner-fixture";
import { githubFromSettings } from "./sim-world";

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const db = createDb(env("TEST_DATABASE_URL"), 4);
const leaseTtlMs = Number(env("LEASE_TTL_MS"));
// the real Claude Code CLI beside the demo agent, against the test's scripted Messages API
const claudeApi = process.env.CLAUDE_API_URL;
const runner = await startRunner({
  db,
  prefix: env("RUNNER_PREFIX"),
  // the simulator the test runs, through the App
  github: githubFromSettings(JSON.parse(env("GITHUB_SETTINGS")), db),
  workspaceRoot: env("WORKSPACE_ROOT"),
  workerId: env("WORKER_ID"),
  leaseTtlMs,
  slots: 2,
  redisUrl: REDIS_URL,
  agentEnv: { ...AGENT_ENV, ATELIER_DEMO_DELAY_MS: process.env.DEMO_DELAY_MS ?? "5", ...(claudeApi ? { ANTHROPIC_API_KEY: env("ANTHROPIC_API_KEY") } : {}) },
  ...(claudeApi ? { roster: agents({ claude: realClaudeAgent(claudeApi) }) } : {}),
  ...(process.env.SESSION_SAVE_EVERY_MS ? { sessionSaveEveryMs: Number(process.env.SESSION_SAVE_EVERY_MS) } : {}),
});
// registered and heartbeating as the worker entry does, three beats per TTL
const identity = workerIdentity(env("WORKER_ID"), 2, "test");
const heartbeat = await startWorkerHeartbeat(db, identity, () => runner.host.running, { everyMs: Math.floor(leaseTtlMs / 3) });
// this host's dead workers' Attempts, closed at once (as the worker entry's recoverAtStart does)
const recovered = await recoverOwnHost(
  { db, redis: runner.redis, workQueue: runner.queue, recheckCondition: async () => true, keyPrefix: `${env("RUNNER_PREFIX")}:`, leaseTtlMs },
  identity,
);
installShutdownSignals({
  host: runner.host,
  workers: [runner.worker],
  cleanup: async () => {
    await heartbeat.stop();
    await runner.queue.close();
    await runner.redis.quit();
    await db.close();
  },
  log: { info: (obj, msg) => process.stdout.write(`${msg} ${JSON.stringify(obj)}\n`) },
  ...(process.env.DRAIN_TIMEOUT_MS ? { drainTimeoutMs: Number(process.env.DRAIN_TIMEOUT_MS) } : {}),
});
process.stdout.write(`worker ready recovered=${JSON.stringify(recovered)}\n`);
