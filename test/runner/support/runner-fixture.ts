import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { Redis } from "ioredis";
import type { Worker } from "bullmq";
import { CLAUDE_BIN } from "../../executor/adapters/real-cli";
import { DEMO_AGENT, type AgentSpec, type InstanceConfig } from "../../../lib/config/roster";
import type { SnapshotStore } from "../../../lib/executor/environment/snapshot-store";
import { itemEventKey, itemKey } from "../../../lib/engine/ids";
import type { MoveOutcome } from "../../../lib/runner/move-run";
import type { ConditionSubject, Executor, RunnerGitHub, RunnerLog } from "../../../lib/runner/runner-deps";
import { createRunnerHost, type RunnerHost } from "../../../lib/runner/runner-host";
import type { Db } from "../../../lib/store/kernel/db";
import { recordAndClaim, type ClaimResult, type EventInput } from "../../../lib/store/runs/claim";
import { createAttemptWorker, type AttemptWorkerOptions } from "../../../jobs/processors/attempt";
import { BullWorkQueue, bullConnection, type MoveRunJob } from "../../../jobs/queues";

/** A key prefix no other test file uses (BullMQ's and the runner's). */
export function uniquePrefix(name: string): string {
  return `t-${name}-${randomBytes(3).toString("hex")}`;
}

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export function agents(extra: Record<string, Partial<AgentSpec>> = {}): Record<string, AgentSpec> {
  const out: Record<string, AgentSpec> = { demo: { ...DEMO_AGENT, command: [...DEMO_AGENT.command], secrets: [], maxAttemptMinutes: 1 } };
  for (const [name, spec] of Object.entries(extra)) out[name] = { ...out.demo!, ...spec, name };
  return out;
}

/**
 * The real Claude Code CLI as a roster entry, talking to a (fake) Messages API at `modelApiUrl`
 * that the egress gateway brokers: the gateway holds the key, the sandbox a placeholder.
 */
export function realClaudeAgent(modelApiUrl: string): Partial<AgentSpec> {
  const cli = realpathSync(CLAUDE_BIN);
  return {
    kind: "claude",
    command: [cli],
    model: "claude-sonnet-4-5",
    modelApi: { url: modelApiUrl, secret: "ANTHROPIC_API_KEY", protocol: "anthropic" },
    pricePerMillionInputUsd: 3,
    pricePerMillionOutputUsd: 15,
    readOnlyPaths: [dirname(dirname(cli))],
    maxAttemptMinutes: 3,
  };
}

/** The agent's environment: the demo agent prints fast. */
export const AGENT_ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATELIER_DEMO_DELAY_MS: "5" };

/** An issue Event with the given prompt (demo markers drive the agent). */
export function issueEvent(repo: string, number: number, hash: string, prompt: string, opts: { approvalRequired?: boolean; agent?: string } = {}): EventInput {
  return {
    id: itemEventKey("start-dev", repo, number, hash, 0),
    kind: "item",
    loop: "start-dev",
    repo,
    itemKey: itemKey(repo, number),
    number,
    contentHash: hash,
    generation: 0,
    submission: { prompt, agent: opts.agent ?? "demo", approvalRequired: opts.approvalRequired ?? false, maxCycles: null },
  };
}

export async function claim(db: Db, event: EventInput): Promise<ClaimResult> {
  return recordAndClaim(db, event);
}

/** Opens a Run. */
export async function openRun(db: Db, event: EventInput): Promise<{ runId: string; receivedAt: Date }> {
  const r = await recordAndClaim(db, event);
  if (r.tag !== "Claimed") throw new Error(`expected a Run, got ${JSON.stringify(r)}`);
  const { rows } = await db.pool.query<{ received_at: Date }>(`SELECT received_at FROM runs WHERE id = $1`, [r.runId]);
  return { runId: r.runId, receivedAt: rows[0]!.received_at };
}

/**
 * A RunnerGitHub whose token endpoint fails for a repository as often as asked (an outage of
 * GitHub's token endpoint: an InfraFailure).
 */
export function withFlakyTokens(github: RunnerGitHub): RunnerGitHub & { failMints(repo: string, count: number): void } {
  const failures = new Map<string, number>();
  return {
    apiHost: github.apiHost,
    failMints: (repo, count) => failures.set(repo, count),
    async mintToken(repo) {
      const left = failures.get(repo) ?? 0;
      if (left > 0) {
        failures.set(repo, left - 1);
        throw new Error("GitHub answered 502 to POST /app/installations/{id}/access_tokens");
      }
      return github.mintToken(repo);
    },
    publishPullRequest: (req) => github.publishPullRequest(req),
    setBranch: (req) => github.setBranch(req),
    deleteRef: (repo, ref) => github.deleteRef(repo, ref),
  };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const runState = async (db: Db, runId: string): Promise<string> =>
  (await db.pool.query<{ state: string }>(`SELECT state FROM runs WHERE id = $1`, [runId])).rows[0]!.state;

/** The state the Run ends in (Succeeded, Failed or Canceled); a read that fails (Postgres away) is asked again. */
export const settledState = (db: Db, runId: string, timeoutMs: number): Promise<string> =>
  waitFor(
    `Run ${runId} to settle`,
    async () => {
      const s = await runState(db, runId).catch(() => null);
      return s && ["Succeeded", "Failed", "Canceled"].includes(s) ? s : null;
    },
    timeoutMs,
    250,
  );

export async function attemptsOf(db: Db, runId: string) {
  const { rows } = await db.pool.query<{
    id: string;
    number: number;
    state: string;
    failure_kind: string | null;
    failure_category: string | null;
    worker_id: string | null;
    lease_token: string | null;
  }>(`SELECT id, number, state, failure_kind, failure_category, worker_id, lease_token FROM attempts WHERE run_id = $1 ORDER BY number`, [runId]);
  return rows;
}

/** The Run's Attempt once it runs on `workerId`. */
export const runningOn = (db: Db, runId: string, workerId: string, timeoutMs = 60_000) =>
  waitFor(`an Attempt of ${runId} on ${workerId}`, async () => (await attemptsOf(db, runId)).find((a) => a.state === "Running" && a.worker_id === workerId), timeoutMs);

/** Puts the Run's move on the queue of `prefix` from outside any worker (for a worker process to take). */
export async function enqueueMove(db: Db, prefix: string, runId: string, receivedAt: Date): Promise<void> {
  const q = new BullWorkQueue({ connection: bullConnection(REDIS_URL), prefix, db, pollIntervalSeconds: 60 });
  await q.moveRun(runId, { receivedAt });
  await q.close();
}

export interface RunnerUnderTest {
  host: RunnerHost;
  queue: BullWorkQueue;
  worker: Worker<MoveRunJob, MoveOutcome>;
  redis: Redis;
  outcomes: MoveOutcome[];
  close(): Promise<void>;
}

export interface StartRunnerOptions {
  db: Db;
  prefix: string;
  github: RunnerGitHub;
  workspaceRoot: string;
  workerId?: string;
  leaseTtlMs?: number;
  slots?: number;
  roster?: Record<string, AgentSpec>;
  recheckCondition?: (s: ConditionSubject) => Promise<boolean>;
  redisUrl?: string;
  worker?: AttemptWorkerOptions;
  log?: RunnerLog;
  agentEnv?: NodeJS.ProcessEnv;
  /** The executor (default: the real one). */
  execute?: Executor;
  /** The transcript's cap (default: the roster's default). */
  transcriptMaxBytes?: number;
  /** The roster's toolchains (default none). */
  toolchains?: InstanceConfig["toolchains"];
  /** Where environment snapshots are kept (default none). */
  snapshots?: SnapshotStore;
  /** The instance key that seals kept sessions (default: the process's ATELIER_SECRET_KEY). */
  sessionKey?: string;
  /** How often a running agent's session is saved at most. */
  sessionSaveEveryMs?: number;
}

/** A runner host with its BullMQ attempts worker and queue, as the worker process wires them. */
export async function startRunner(o: StartRunnerOptions): Promise<RunnerUnderTest> {
  const connection = bullConnection(o.redisUrl ?? REDIS_URL);
  const redis = new Redis(o.redisUrl ?? REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new BullWorkQueue({ connection, prefix: o.prefix, db: o.db, pollIntervalSeconds: 60 });
  const host = createRunnerHost(
    {
      db: o.db,
      redis,
      workQueue: queue,
      github: o.github,
      recheckCondition: o.recheckCondition ?? (async () => true),
      ...(o.log ? { log: o.log } : {}),
      ...(o.execute ? { execute: o.execute } : {}),
    },
    {
      workerId: o.workerId ?? `test-${process.pid}`,
      keyPrefix: `${o.prefix}:`,
      // a busy machine stalls a process for seconds; a file that tests a lease running out sets its own
      leaseTtlMs: o.leaseTtlMs ?? 10_000,
      workspaceRoot: o.workspaceRoot,
      roster: { agents: o.roster ?? agents(), maxConcurrentAttempts: o.slots ?? 2, ...(o.toolchains ? { toolchains: o.toolchains } : {}) },
      ...(o.snapshots ? { snapshots: o.snapshots } : {}),
      agentEnv: o.agentEnv ?? AGENT_ENV,
      killGraceMs: 500,
      transcript: { flushMs: 50, ...(o.transcriptMaxBytes ? { maxBytes: o.transcriptMaxBytes } : {}) },
      ...(o.sessionKey ? { sessionKey: o.sessionKey } : {}),
      ...(o.sessionSaveEveryMs ? { sessionSaveEveryMs: o.sessionSaveEveryMs } : {}),
    },
  );
  await host.start();
  const worker = createAttemptWorker(connection, host, { prefix: o.prefix, lockDurationMs: 3_000, stalledIntervalMs: 1_000, ...o.worker });
  const outcomes: MoveOutcome[] = [];
  worker.on("completed", (_job, out) => outcomes.push(out));
  await worker.waitUntilReady();
  return {
    host,
    queue,
    worker,
    redis,
    outcomes,
    async close() {
      await host.stop({ waitMs: 500 });
      await worker.close(true);
      await host.close();
      // this file's prefix: leave the shared Redis as it was
      await queue.queue("attempts").obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
