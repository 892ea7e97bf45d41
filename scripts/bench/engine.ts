// Events → Attempts done through the engine, with the executor replaced by a no-op
// implementation of its interface (it writes one transcript line and reports Succeeded with
// nothing pushed: no git, no process), so what is measured is the engine path itself:
// recordAndClaim, the BullMQ job, the slot, the Redis lease, the re-decision, startAttempt,
// the transcript insert, finishAttempt and continueWithNewest. Beside it, measured in the same
// run on the same Redis and PostgreSQL with the same concurrency: raw BullMQ jobs with a no-op
// processor, and the floor of this design: a BullMQ job whose processor makes three one-row
// insert transactions with the pg driver (the Event, the Attempt's start, its outcome). A
// second reference writes the rows an engine Run writes, in the same tables (their indexes,
// constraints and current-Run triggers), by bare statements in three transactions (the Event
// and its Run; the start and the Attempt; the outcome, the month's counter and two transcript
// lines): `engine_vs_rows` is what the engine costs beyond the writes it must make.
// The engine's Events are of repositories no installation registered, so nothing is metered,
// and of Items with no row, so the current-Run triggers only look them up; a metered engine
// round, in the same rounds, submits the product's: through the admission gate the wiring gives
// every process, on 1,024 repositories of one installation that set no quota (each open charges
// the month's counters and takes a token of its repository's default open rate, each outcome
// charges its minutes), on Items stored beforehand as a poll stores them (each open and each
// outcome keeps its Item's current Run), `engine_metered_vs_floor`.
// Throughput: SUBMITTERS lanes submit as fast as they can, in rounds alternating with the three
// references, after one warm-up round of each. Each ratio is the median, over the rounds, of
// the ratio within a round: the machine's speed drifts by ±10 % over minutes here, and a ratio
// of rates measured seconds apart cancels it where a ratio of two best rounds (perhaps minutes
// apart) does not. The rates printed are the medians. Latency (Event submitted → Attempt
// recorded): a paced round at half the engine's measured throughput, so it is the path's
// latency and not the wait of a saturated queue. The CPU that Postgres, Redis and Node spent
// per Run and per floor job over the counted rounds is printed beside them: the throughput of
// both is bound by the machine's CPU, so these say where the engine's extra cost is.
import { randomBytes } from "node:crypto";
import { Queue, Worker, type Job } from "bullmq";
import pg from "pg";
import { createRedis } from "../../lib/config/redis";
import { DEMO_AGENT } from "../../lib/config/roster";
import { itemEventKey, itemKey } from "../../lib/engine/ids";
import type { AttemptOutcome } from "../../lib/executor/execute-attempt";
import type { MoveOutcome } from "../../lib/runner/move-run";
import type { Executor } from "../../lib/runner/runner-deps";
import { createRunnerHost } from "../../lib/runner/runner-host";
import { admission } from "../../lib/metering/admission";
import { createDb } from "../../lib/store/db";
import { recordAndClaim, type EventInput } from "../../lib/store/record-and-claim";
import { createAttemptWorker } from "../../jobs/processors/attempt";
import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { countingCpu, noCpu, type CpuSide } from "./cpu";
import { bench, median, percentile, ratio } from "./measure";
import { registerRepositories, storeItems } from "./registered";

const SLOTS = 8;
const SUBMITTERS = 8;
const PER_ROUND = 2000;
const ROUNDS = 7;
const PACED = 300;

/** The executor's interface, doing nothing: one line of output, Succeeded, nothing pushed. */
const noopExecutor: Executor = async (input, deps) => {
  deps.onOutput({ stream: "stdout", text: "noop" });
  const usage = { durationMs: 0, agentMs: 0, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false, costExact: false, model: null, turns: null, sessionId: null };
  const outcome: AttemptOutcome = {
    tag: "Succeeded",
    summary: "nothing to do",
    pullRequest: null,
    usage,
    harvest: { branch: input.branch, baseSha: "0", headSha: "0", commits: [], pushed: false, committedLeftovers: false, problem: null },
  };
  return outcome;
};

/** Events spread over this many repositories, as an instance serves many. */
const REPOSITORIES = 64;
/** The metered rounds' repositories: enough that no repository's default open rate is reached in one run. */
const METERED_REPOSITORIES = 1024;

/** Event `i` (Item number i + 1) with content `tag`, of the repository `repoOf(i)`, for the no-op agent: a Loop that opens at once. */
export function noopEvent(tag: string, i: number, repoOf: (i: number) => string = (n) => `bench/engine-${n % REPOSITORIES}`): EventInput {
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

/** Runs `submit` for 0..total-1 on SUBMITTERS lanes; resolves when `done` has seen them all. */
async function drive(total: number, submit: (i: number) => Promise<void>, done: Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: SUBMITTERS }, async () => {
      while (next < total) await submit(next++);
    }),
  );
  await done;
  return (total / (performance.now() - t0)) * 1000;
}

function counter(total: number): { tick(): void; done: Promise<void> } {
  let seen = 0;
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  return {
    tick: () => {
      if (++seen === total) resolve();
    },
    done,
  };
}

async function bullmqRound(prefix: string, round: number, processor: (job: Job<{ i: number }>) => Promise<void>): Promise<number> {
  const connection = bullConnection();
  const name = `bench-${round}-${randomBytes(2).toString("hex")}`;
  const queue = new Queue(name, { connection, prefix });
  const finished = counter(PER_ROUND);
  const worker = new Worker(name, processor, { connection, prefix, concurrency: SLOTS, removeOnComplete: { count: 0 } });
  worker.on("completed", () => finished.tick());
  await worker.waitUntilReady();
  const rate = await drive(PER_ROUND, async (i) => void (await queue.add("job", { i }, { jobId: `j-${i}`, removeOnComplete: true })), finished.done);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return rate;
}

export async function engineBench(url: string): Promise<void> {
  const prefix = `bench-engine-${randomBytes(3).toString("hex")}`;
  const connection = bullConnection();
  const db = createDb(url, SLOTS + SUBMITTERS);
  const raw = new pg.Pool({ connectionString: url, max: SLOTS });
  await raw.query(`CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, body jsonb, at timestamptz DEFAULT now())`);
  /** One transaction of bare statements on a connection of its own, as the driver alone sends it. */
  const bareTx = async (statements: [string, unknown[]][]) => {
    const c = await raw.connect();
    try {
      await c.query("BEGIN");
      for (const [text, values] of statements) await c.query(text, values);
      await c.query("COMMIT");
    } finally {
      c.release();
    }
  };
  const insertTx = (i: number) => bareTx([[`INSERT INTO bench_floor (body) VALUES ($1)`, [JSON.stringify({ i })]]]);

  /** One engine Run's rows, written bare: the Event and its Run, the start, the outcome. */
  const rowsTx = async (tag: string, i: number) => {
    const e = noopEvent(tag, i);
    const runId = `${tag}-${i}`;
    const attemptId = `${runId}/agent/1`;
    await bareTx([
      [
        `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'Pending', 'noop', 'Do nothing', false, now())`,
        [runId, e.id, e.loop, e.repo, e.itemKey, e.number],
      ],
      [
        `INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, generation, status, submission, run_id)
         VALUES ($1, 'item', $2, $3, $4, $5, $6, 0, 'Claimed', $7, $8)`,
        [e.id, e.loop, e.repo, e.itemKey, e.number, e.contentHash, JSON.stringify(e.submission), runId],
      ],
    ]);
    await bareTx([
      [`UPDATE runs SET state = 'Running', started_at = now(), updated_at = now() WHERE id = $1`, [runId]],
      [
        `INSERT INTO attempts (id, run_id, step, number, state, lease_token, worker_id, agent) VALUES ($1, $2, 'agent', 1, 'Running', $3, 'bench', 'noop')`,
        [attemptId, runId, `bench/${i}`],
      ],
    ]);
    await bareTx([
      [`UPDATE attempts SET state = 'Succeeded', ended_at = now(), summary = 'nothing to do', duration_ms = 0 WHERE id = $1`, [attemptId]],
      [
        `INSERT INTO usage_counters (scope, month, runs, cost_usd, minutes) VALUES ($1, to_char(now(), 'YYYY-MM'), 0, 0, 0)
         ON CONFLICT (scope, month) DO UPDATE SET cost_usd = usage_counters.cost_usd + EXCLUDED.cost_usd, minutes = usage_counters.minutes + EXCLUDED.minutes`,
        [`repo:${e.repo}`],
      ],
      [`UPDATE runs SET state = 'Succeeded', ended_at = now(), updated_at = now() WHERE id = $1`, [runId]],
      [
        `INSERT INTO transcript_entries (attempt_id, run_id, stream, text) VALUES ($1, $2, 'system', 'attempt 1 started'), ($1, $2, 'stdout', 'noop')`,
        [attemptId, runId],
      ],
    ]);
  };

  const meteredRepo = await registerRepositories(raw, 2, "engine-metered", METERED_REPOSITORIES);
  // every round opens one Run on each of these Items: each Item's history grows by one Run a round
  await storeItems(raw, Array.from({ length: PER_ROUND }, (_, i) => ({ repo: meteredRepo(i), number: i + 1 })));
  const gate = admission();

  const redis = createRedis();
  const workQueue = new BullWorkQueue({ connection, prefix, db, pollIntervalSeconds: 60 });
  const host = createRunnerHost(
    {
      db,
      redis,
      workQueue,
      github: {
        mintToken: async () => ({ token: "none", cloneUrl: "https://example.invalid/bench/engine.git", defaultBranch: "main" }),
        publishPullRequest: async () => null,
      },
      recheckCondition: async () => true,
      execute: noopExecutor,
      admission: gate,
    },
    {
      workerId: "bench",
      keyPrefix: `${prefix}:`,
      workspaceRoot: "/nonexistent",
      roster: {
        agents: {
          noop: { ...DEMO_AGENT, name: "noop", command: ["true"], maxAttemptMinutes: 1 },
        },
        maxConcurrentAttempts: SLOTS,
      },
    },
  );
  await host.start();
  const worker = createAttemptWorker(connection, host, { prefix });
  await worker.waitUntilReady();

  /** Submits `total` Events (recordAndClaim, then the Run's job) and resolves when all their Attempts are done; `metered`: the product's claims, through the gate. */
  const engineRound = async (
    tag: string,
    total: number,
    latencies: number[],
    submit: (go: (i: number) => Promise<void>, done: Promise<void>) => Promise<number>,
    metered = false,
  ) => {
    const submittedAt = new Map<string, number>();
    const finished = counter(total);
    const onDone = (_job: unknown, out: MoveOutcome) => {
      if (out.tag !== "Attempted") return;
      const t0 = submittedAt.get(out.attemptId.split("/")[0]!);
      if (t0 === undefined) return;
      latencies.push(performance.now() - t0);
      finished.tick();
    };
    worker.on("completed", onDone);
    try {
      return await submit(async (i) => {
        const t0 = performance.now();
        const claim = metered ? await recordAndClaim(db, noopEvent(tag, i, meteredRepo), gate) : await recordAndClaim(db, noopEvent(tag, i));
        if (claim.tag !== "Claimed") throw new Error(`bench Event ${i} was not claimed: ${claim.tag}`);
        submittedAt.set(claim.runId, t0);
        await workQueue.moveRun(claim.runId, { receivedAt: new Date(), opened: claim.openedRun });
      }, finished.done);
    } finally {
      worker.off("completed", onDone);
    }
  };

  const engineRates: number[] = [];
  const meteredRates: number[] = [];
  const bullRates: number[] = [];
  const floorRates: number[] = [];
  const rowsRates: number[] = [];
  const latencies: number[] = [];
  const engineCpu = noCpu();
  const floorCpu = noCpu();
  const rowsCpu = noCpu();
  // round 0 warms up (JIT, connections, caches) and is not counted: the first round of each
  // runs measurably slower, the engine's most, and would otherwise weigh on a short series
  for (let round = 0; round <= ROUNDS; round++) {
    const counted = round > 0;
    const e = await countingCpu(counted ? engineCpu : noCpu(), () =>
      engineRound(`${Date.now()}-${round}`, PER_ROUND, [], (go, done) => drive(PER_ROUND, go, done)),
    );
    const m = await engineRound(`${Date.now()}-${round}-metered`, PER_ROUND, [], (go, done) => drive(PER_ROUND, go, done), true);
    const b = await bullmqRound(prefix, round, async () => undefined);
    const f = await countingCpu(counted ? floorCpu : noCpu(), () =>
      bullmqRound(prefix, round, async () => {
        for (let k = 0; k < 3; k++) await insertTx(k);
      }),
    );
    const tag = `rows-${Date.now()}-${round}`;
    const r = await countingCpu(counted ? rowsCpu : noCpu(), () => bullmqRound(prefix, round, async (job) => rowsTx(tag, job.data.i)));
    if (counted) {
      engineRates.push(e);
      meteredRates.push(m);
      bullRates.push(b);
      floorRates.push(f);
      rowsRates.push(r);
    }
  }

  // latency, paced at half the throughput measured above
  const engine = median(engineRates);
  const gapMs = 1000 / (engine / 2);
  await engineRound(`${Date.now()}-paced`, PACED, latencies, async (go, done) => {
    for (let i = 0; i < PACED; i++) {
      void go(i);
      await new Promise((r) => setTimeout(r, gapMs));
    }
    await done;
    return 0;
  });

  await worker.close();
  await host.close();
  await workQueue.queue("attempts").obliterate({ force: true });
  await workQueue.close();
  await redis.quit();
  await raw.end();
  await db.close();

  const bullmq = median(bullRates);
  const floor = median(floorRates);
  bench("engine_runs_per_s", engine, "runs/s");
  bench("engine_metered_runs_per_s", median(meteredRates), "runs/s");
  bench("bullmq_noop_jobs_per_s", bullmq, "jobs/s");
  bench("floor_3tx_jobs_per_s", floor, "jobs/s");
  bench("rows_3tx_jobs_per_s", median(rowsRates), "jobs/s");
  bench("event_to_attempt_p50_ms", percentile(latencies, 50), "ms");
  bench("event_to_attempt_p99_ms", percentile(latencies, 99), "ms");
  for (const side of Object.keys(engineCpu) as CpuSide[]) {
    bench(`engine_${side}_cpu_us_per_run`, (engineCpu[side] * 1000) / (ROUNDS * PER_ROUND), "us");
    bench(`floor_${side}_cpu_us_per_job`, (floorCpu[side] * 1000) / (ROUNDS * PER_ROUND), "us");
    bench(`rows_${side}_cpu_us_per_job`, (rowsCpu[side] * 1000) / (ROUNDS * PER_ROUND), "us");
  }
  ratio("engine_vs_floor", median(engineRates.map((e, i) => e / floorRates[i]!)));
  ratio("engine_metered_vs_floor", median(meteredRates.map((m, i) => m / floorRates[i]!)));
  ratio("engine_vs_rows", median(engineRates.map((e, i) => e / rowsRates[i]!)));
  ratio("engine_vs_bullmq", median(engineRates.map((e, i) => e / bullRates[i]!)));
}
