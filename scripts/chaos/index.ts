// `npm run chaos`: breaks a private Atelier on purpose — kill -9 of workers and of the web
// process, FLUSHALL, Redis and Postgres away — while Runs are in flight, and prints one line a
// scenario: CHAOS <scenario> runs= lost= duplicates= stuck= concurrent_agents_max= recovery_s=
// (and poll_found_s=, after a FLUSHALL: how soon polling found an issue whose webhook was lost).
// `npm run chaos -- <scenario> …` runs only those.
// Its own Postgres cluster and Redis on private ports; the whole run stays under 15 minutes.
import { Redis } from "ioredis";
import { agentsAlivePerRunMax, concurrentAttempts, runningAttempts, tally } from "./measure";
import { CHAOS_REPO_CONFIG, ChaosWorld } from "./world";

const WHOLE_RUN_MS = 15 * 60_000;
/** How long a scenario waits after its fault for every Run to finish; what is still open then is stuck. */
const SETTLE_MS = 75_000;
const RUNS_PER_SCENARIO = 16;
const ORG = "chaos-org";
const WRITER = "chaos-writer";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Scenario {
  name: string;
  runs?: number;
  /** the fault strikes while the issues are created (webhooks in flight), else once Runs are running */
  during?: "creation";
  /** right after the fault, one more issue is created whose webhooks are lost: only polling finds it */
  droppedWebhookAfter?: true;
  fault(world: ChaosWorld): Promise<void>;
}

const SCENARIOS: Scenario[] = [
  {
    name: "worker-kill-restarted",
    async fault(w) {
      await w.workers[0]!.kill();
      await w.workers[0]!.start();
    },
  },
  {
    name: "worker-kill-takeover",
    async fault(w) {
      await w.workers[0]!.kill(); // not restarted: the second worker takes over
    },
  },
  {
    name: "web-kill-mid-webhook",
    during: "creation",
    async fault(w) {
      await w.web.kill();
      await sleep(5_000);
      await w.web.start();
    },
  },
  {
    name: "flushall",
    droppedWebhookAfter: true,
    async fault(w) {
      const redis = new Redis(w.redis.url, { maxRetriesPerRequest: 1 });
      await redis.flushall();
      redis.disconnect();
    },
  },
  {
    name: "redis-down-20s",
    async fault(w) {
      await w.redis.stop();
      await sleep(20_000);
      await w.redis.start(); // on the same port
    },
  },
  {
    name: "postgres-restart",
    async fault(w) {
      w.postgres.stop();
      w.postgres.start();
    },
  },
  {
    name: "postgres-down-20s",
    async fault(w) {
      w.postgres.stop();
      await sleep(20_000);
      w.postgres.start();
    },
  },
  { name: "two-workers-burst", runs: 32, async fault() {} },
];

async function until(check: () => Promise<boolean>, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await sleep(1_000);
  }
  return false;
}

async function runScenario(world: ChaosWorld, scenario: Scenario, endOfRun: number): Promise<string> {
  const name = `s-${scenario.name}`;
  const repo = `${ORG}/${name}`;
  const count = scenario.runs ?? RUNS_PER_SCENARIO;
  await world.control("createRepo", { owner: ORG, name, files: { ".github/atelier.yml": CHAOS_REPO_CONFIG } });
  await world.control("addRepository", { repo });
  await world.control("setUserPermission", { repo, login: WRITER, permission: "write" }); // a writer's label starts the agent at once
  const registered = await until(async () => (await world.db.query(`SELECT 1 FROM repositories WHERE full_name = $1`, [repo])).rowCount === 1, Date.now() + 60_000);
  if (!registered) return `CHAOS ${scenario.name} skipped: the repository was not registered within 60 s`;
  const issues: number[] = [];
  const createOne = async (title: string) =>
    (await world.control<{ number: number }>("createIssue", { repo, title, body: "[demo:spawn-child] [demo:sleep 15]", labels: ["ready-for-agent"], login: WRITER })).number;
  const create = async () => {
    for (let i = 0; i < count; i++) issues.push(await createOne(`Chaos ${i}`));
  };
  let faultEnd: number;
  if (scenario.during === "creation") {
    const creating = create();
    await sleep(300);
    await scenario.fault(world);
    faultEnd = Date.now();
    await creating;
  } else {
    await create();
    await until(async () => (await runningAttempts(world.db, repo)) >= Math.min(8, count), Date.now() + 60_000);
    await scenario.fault(world);
    faultEnd = Date.now();
  }
  let unhinted: number | null = null;
  if (scenario.droppedWebhookAfter) {
    unhinted = await world.withWebhooksLost(() => createOne("Chaos, its webhooks lost"));
    issues.push(unhinted);
  }
  let foundAt: number | null = null;
  let concurrentMax = 0;
  let settledAt: number | null = null;
  const deadline = Math.min(faultEnd + SETTLE_MS, endOfRun);
  while (Date.now() < deadline) {
    concurrentMax = Math.max(concurrentMax, agentsAlivePerRunMax());
    try {
      concurrentMax = Math.max(concurrentMax, await concurrentAttempts(world.db, repo));
      if (unhinted !== null && foundAt === null && (await world.db.query(`SELECT 1 FROM runs WHERE repo = $1 AND number = $2`, [repo, unhinted])).rowCount) foundAt = Date.now();
      const now = await tally(world.db, repo, issues);
      if (now.open === 0 && now.lost === 0) {
        settledAt = Date.now();
        break;
      }
    } catch {
      // Postgres away: the next sample
    }
    await sleep(1_000);
  }
  const final = await tally(world.db, repo, issues);
  const recovery = settledAt === null ? `>${Math.round((deadline - faultEnd) / 1000)}` : ((settledAt - faultEnd) / 1000).toFixed(1);
  const polled = unhinted === null ? "" : ` poll_found_s=${foundAt === null ? `>${Math.round((deadline - faultEnd) / 1000)}` : ((foundAt - faultEnd) / 1000).toFixed(1)}`;
  return `CHAOS ${scenario.name} runs=${final.runs} lost=${final.lost} duplicates=${final.duplicates} stuck=${final.open} concurrent_agents_max=${concurrentMax} recovery_s=${recovery}${polled}`;
}

/** Brings back what a scenario left broken (a worker not restarted, the web), for the next one. */
async function heal(world: ChaosWorld): Promise<void> {
  for (const child of [world.web, ...world.workers]) if (!child.alive) await child.start();
}

async function main(): Promise<void> {
  const started = Date.now();
  const endOfRun = started + WHOLE_RUN_MS - 30_000;
  const only = process.argv.slice(2);
  const scenarios = only.length ? SCENARIOS.filter((s) => only.includes(s.name)) : SCENARIOS;
  console.error("chaos: starting a private Postgres, Redis, the simulator, the web process and two workers");
  const world = await ChaosWorld.start();
  console.error(`chaos: logs in ${world.dir}`);
  const abort = (why: string) => {
    console.error(`chaos: ${why}; stopping`);
    void world.close().finally(() => process.exit(2));
  };
  const stopAll = setTimeout(() => abort("the whole run took too long"), WHOLE_RUN_MS);
  process.once("SIGINT", () => abort("interrupted"));
  process.once("SIGTERM", () => abort("terminated"));
  try {
    await world.control("createOrg", { login: ORG });
    await world.control("createUser", { login: WRITER });
    await world.control("createInstallation", { account: ORG, repos: [] });
    for (const scenario of scenarios) {
      if (Date.now() > endOfRun - SETTLE_MS) {
        console.log(`CHAOS ${scenario.name} skipped: not enough time left in the 15 minutes`);
        continue;
      }
      console.log(await runScenario(world, scenario, endOfRun).catch((err: unknown) => `CHAOS ${scenario.name} failed: ${err instanceof Error ? err.message : String(err)}`));
      await heal(world);
    }
  } finally {
    clearTimeout(stopAll);
    await world.close();
  }
}

await main();
