// The engine at a product's pace: how long an Event waits before its Attempt starts.
// Ten registered repositories of one installation, one new Event every 100 ms — a busy
// organization, above the 30 Runs a minute one repository may open by default, so each
// repository's open rate is raised to admit them. Every claim goes through the admission gate
// the wiring gives every process, which charges the month's counters and takes a token of the
// repository's open rate. Each Event
// goes the product's way: recordAndClaim, the Run's BullMQ job, the slot, the Redis lease, the
// decision, startAttempt, then the executor — here one that does nothing, so what is measured is
// the engine, not an agent. The latency is from the Event's submission to the executor's call
// (the moment a real agent would start), in rounds after a warm-up round; the figures printed
// are the medians of the rounds' own percentiles.
import { randomBytes } from "node:crypto";
import { createRedis } from "../../lib/config/redis";
import { DEMO_AGENT } from "../../lib/config/roster";
import { itemEventKey, itemKey } from "../../lib/engine/ids";
import type { AttemptOutcome } from "../../lib/executor/execute-attempt";
import { admission } from "../../lib/metering/admission";
import type { Executor } from "../../lib/runner/runner-deps";
import { createRunnerHost } from "../../lib/runner/runner-host";
import { createDb } from "../../lib/store/kernel/db";
import { recordAndClaim, type EventInput } from "../../lib/store/runs/claim";
import { createAttemptWorker } from "../../jobs/processors/attempt";
import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { bench, median, percentile } from "./measure";
import { registerRepositories, storeItems } from "./registered";

const SLOTS = 8;
const REPOSITORIES = 10;
const GAP_MS = 100;
const PER_ROUND = 300;
const ROUNDS = 3;
const WARM_UP = 50;

/** Event `i` of round `tag`: a new Item of the repository `repoOf(i)` that opens a Run at once. */
function event(tag: string, i: number, repoOf: (n: number) => string): EventInput {
  const repo = repoOf(i);
  return {
    id: itemEventKey("start-dev", repo, i + 1, tag, 0),
    kind: "item",
    loop: "start-dev",
    repo,
    itemKey: itemKey(repo, i + 1),
    number: i + 1,
    contentHash: tag,
    generation: 0,
    submission: { prompt: "Do nothing", agent: "noop", approvalRequired: false, maxCycles: null },
  };
}

export async function engineBench(url: string): Promise<void> {
  const prefix = `bench-engine-${randomBytes(3).toString("hex")}`;
  const connection = bullConnection();
  const db = createDb(url);
  const repoOf = await registerRepositories(db.pool, 2, "engine", REPOSITORIES);
  await db.pool.query(`INSERT INTO quotas (repository_id, open_rate_per_minute) SELECT id, 6000 FROM repositories WHERE installation_id = 2`);
  // the Items exist, as a poll stores them before it claims: each open keeps its Item's current Run
  await storeItems(db.pool, Array.from({ length: PER_ROUND }, (_, i) => ({ repo: repoOf(i), number: i + 1 })));
  const gate = admission();

  /** When each Run's Event was submitted, and the executor's calls, measured against it. */
  const submittedAt = new Map<string, number>();
  const started: number[] = [];
  const executor: Executor = async (input) => {
    const t0 = submittedAt.get(input.runId);
    if (t0 !== undefined) started.push(performance.now() - t0);
    const usage = { durationMs: 0, agentMs: 0, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false, costExact: false, model: null, turns: null, sessionId: null };
    const outcome: AttemptOutcome = {
      tag: "Succeeded",
      summary: "nothing to do",
      pullRequest: null,
      usage,
      harvest: { branch: input.branch, ref: `refs/heads/${input.branch}`, remoteBranchSha: null, baseSha: "0", headSha: "0", commits: [], pushed: false, committedLeftovers: false, problem: null, leftoversRefused: null },
      held: null,
    };
    return outcome;
  };

  const redis = createRedis();
  const workQueue = new BullWorkQueue({ connection, prefix, db, pollIntervalSeconds: 60 });
  const host = createRunnerHost(
    {
      db,
      redis,
      workQueue,
      github: {
        apiHost: "example.invalid",
        mintToken: async () => ({ token: "none", repositoryId: "1", cloneUrl: "https://example.invalid/bench/engine.git", defaultBranch: "main" }),
        publishPullRequest: async () => null,
        setBranch: async () => undefined,
        deleteRef: async () => undefined,
      },
      recheckCondition: async () => true,
      execute: executor,
      admission: gate,
    },
    {
      workerId: "bench",
      keyPrefix: `${prefix}:`,
      workspaceRoot: "/nonexistent",
      roster: { agents: { noop: { ...DEMO_AGENT, name: "noop", command: ["true"], maxAttemptMinutes: 1 } }, maxConcurrentAttempts: SLOTS },
    },
  );
  await host.start();
  const worker = createAttemptWorker(connection, host, { prefix });
  await worker.waitUntilReady();

  /** One paced round of `total` Events; the latencies of its Attempts' starts. */
  const round = async (tag: string, total: number): Promise<number[]> => {
    started.length = 0;
    const submissions: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      submissions.push(
        (async () => {
          const t0 = performance.now();
          const claim = await recordAndClaim(db, event(tag, i, repoOf), gate);
          if (claim.tag !== "Claimed") throw new Error(`bench: Event ${i} was not claimed: ${JSON.stringify(claim)}`);
          submittedAt.set(claim.runId, t0);
          await workQueue.moveRun(claim.runId, { receivedAt: new Date() });
        })(),
      );
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
    await Promise.all(submissions);
    while (started.length < total) await new Promise((r) => setTimeout(r, 50));
    return [...started];
  };

  await round(`warm-${Date.now()}`, WARM_UP);
  const p50s: number[] = [];
  const p99s: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const latencies = await round(`r${r}-${Date.now()}`, PER_ROUND);
    p50s.push(percentile(latencies, 50));
    p99s.push(percentile(latencies, 99));
  }

  await worker.close();
  await host.close();
  await workQueue.queue("attempts").obliterate({ force: true });
  await workQueue.close();
  await redis.quit();
  await db.close();

  bench("event_to_attempt_p50_ms", median(p50s), `ms (one Event every ${GAP_MS} ms over ${REPOSITORIES} repositories, through the gate)`);
  bench("event_to_attempt_p99_ms", median(p99s), "ms");
}
