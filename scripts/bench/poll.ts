// Poll cost and Hint latency against the GitHub simulator (in process, real HTTP).
// 1. The GitHub calls of one poll tick over 20 repositories × 500 Items (1% changed: 4 issues
//    and one open pull request of each; the open pull requests carry reviews, review threads and checks), beside what the reference way would send: one listing
//    per repository, one payload call per changed Item and one per open pull request. Ours: one
//    change probe for the 20 (GraphQL), then per changed repository its listing and the pull
//    requests that changed (GraphQL, shared).
// 2. From a webhook's receipt to its Run visible in Postgres (the Hint path, through BullMQ).
// 3. Adaptive intervals at 1,000 repositories of one installation, over one simulated hour
//    without webhooks: the simulator's clock (lib/sandbox/sim-clock.ts) and the triggers' clock
//    are one virtual clock, moved 15 s (one poll tick) at a time, and each tick runs
//    pollDueRepositories as the poll scheduler would, so the hour takes minutes. Twelve Items
//    get the ready label at spread-out times; the time to its Run in Postgres is measured in
//    virtual seconds (to the tick that opened it). Requests per minute are counted per virtual
//    minute (304s included), points as the REST calls that were not 304 plus GraphQL queries.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { createHintWorker } from "../../jobs/processors/hint";
import { BullWorkQueue, bullConnection, QUEUE_NAMES } from "../../jobs/queues";
import { atelierApp } from "../../probot.config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { createGitHubApp } from "../../lib/github/app-client";
import { reconcileInstallations } from "../../lib/github/installation-sync";
import { silentLog } from "../../lib/github/log";
import { nodeWebhookHandler } from "../../lib/github/node-webhook-handler";
import { receiveWebhook } from "../../lib/github/receive-webhook";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { createPull, forceMergeable } from "../../lib/sandbox/state/pulls";
import { RUN_CHANGED_CHANNEL } from "../../lib/store/runs/run-changed";
import { createDb } from "../../lib/store/kernel/db";
import { createTriggerDeps } from "../../lib/triggers/deps";
import { pollDueRepositories } from "../../lib/triggers/poll-installation";
import { MAX_POLL_INTERVAL_SECONDS } from "../../lib/triggers/poll-interval";
import { bench, percentile, ratio } from "./measure";

const REPOS = 20;
const ISSUES = 400;
const PULLS = 100;
const OPEN_PULLS = 25;
const CHANGED_ISSUES = 4;
const CHANGED_PULLS = 1; // 1% of 500 Items: 4 issues and one open pull request
const HINT_SAMPLES = 60;

const CONFIG = `labels:
  - { name: ready-for-agent, color: 0e8a16 }
  - { name: ready-for-review, color: 1d76db }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: demo
    prompt: Implement #\${{ item.number }} \${{ item.title }}
  review:
    on: pull_requests
    if: contains(item.labels.*.name, 'ready-for-review') && item.state == 'open'
    agent: demo
    prompt: Review #\${{ item.number }}
`;

async function seed(sim: Simulator): Promise<string[]> {
  sim.createOrg({ login: "bench" });
  sim.createUser({ login: "octo" });
  sim.setDefaultUser({ login: "octo" });
  const names: string[] = [];
  for (let r = 0; r < REPOS; r++) {
    const { fullName } = await sim.createRepo({ owner: "bench", name: `repo-${r}`, files: { ".github/atelier.yml": CONFIG } });
    names.push(fullName.toLowerCase());
    // the changes come from a team member (a writer): their role is one GraphQL edge, not a REST call
    sim.setUserPermission({ repo: fullName, login: "octo", permission: "write" });
  }
  sim.createInstallation({ account: "bench" });
  const author = sim.state.findAccount("octo")!.id;
  const anHourAgo = sim.now().epochMs - 3_600_000;
  for (const fullName of names) {
    sim.createLabel({ repo: fullName, name: "ready-for-agent", color: "0e8a16" });
    sim.createLabel({ repo: fullName, name: "ready-for-review", color: "1d76db" });
    const repo = sim.state.repoByFullName(fullName);
    for (let i = 0; i < ISSUES; i++) sim.createIssue({ repo: fullName, title: `Issue ${i}`, body: `Body ${i}`, labels: i % 10 === 0 ? ["ready-for-agent"] : [] });
    for (let i = 0; i < PULLS; i++) {
      const item = createPull(sim.state, repo, { title: `PR ${i}`, head: `b${i}`, headSha: "a".repeat(40), base: "main", baseSha: "a".repeat(40) }, author);
      forceMergeable(item, true);
      if (i >= OPEN_PULLS) sim.editIssue({ repo: fullName, number: item.number, state: "closed" });
      // the open pull requests carry reviews, threads and checks: their projection reads them in the same query
      else sim.review({ repo: fullName, number: item.number, event: "COMMENT", body: "Looks close.", comments: [{ path: "a.txt", line: 1, body: "A nit." }] });
    }
    sim.finishCiCheck({ repo: fullName, sha: "a".repeat(40), name: "unit tests", conclusion: "success", summary: "All green" });
    // the history is an hour old, one change a second: the cycle measured sees what changes next
    sim.state.itemsOf(repo).forEach((item, i) => {
      item.createdAt = item.updatedAt = anHourAgo + i * 1000;
    });
  }
  return names;
}

export async function pollBench(url: string): Promise<void> {
  const db = createDb(url, 20);
  const sim = await startSimulator({});
  const names = await seed(sim);
  const settings = sim.appSettings();
  const github = createGitHubApp(settings, { log: silentLog });
  const prefix = `bench-poll-${process.pid}`;
  const workQueue = new BullWorkQueue({ connection: bullConnection(), prefix, db, pollIntervalSeconds: 60 });
  const deps = createTriggerDeps({ db, github, workQueue, roster: defaultInstanceConfig(), log: silentLog, clock: { now: () => sim.now().epochMs } });
  const tick = async () => {
    // past the longest interval: every repository is due
    sim.advanceClock({ ms: (MAX_POLL_INTERVAL_SECONDS + 1) * 1000 });
    return pollDueRepositories(deps);
  };
  await reconcileInstallations(deps);
  const installation = [...sim.state.installations.values()][0]!.id;

  // a first cycle reads everything, a second one settles; then 1% of the Items change
  await tick();
  await tick();
  for (const fullName of names) {
    const repo = sim.state.repoByFullName(fullName);
    const items = sim.state.itemsOf(repo);
    items.filter((i) => !i.pull).slice(0, CHANGED_ISSUES).forEach((i) => sim.editIssue({ repo: fullName, number: i.number, body: `${i.body} (edited)` }));
    items.filter((i) => i.pull && i.state === "open").slice(0, CHANGED_PULLS).forEach((i) => sim.addLabels({ repo: fullName, number: i.number, labels: ["ready-for-review"] }));
  }
  sim.resetCounters();
  const t0 = performance.now();
  const outcomes = await tick();
  const cycleMs = performance.now() - t0;
  const failed = outcomes.filter((o) => o.status !== "polled");
  if (failed.length) throw new Error(`poll failed: ${JSON.stringify(failed[0])}`);
  const counts = sim.counters.byCaller[`installation:${installation}`]!;
  const calls = counts.rest + counts.notModified + counts.graphql;
  // the reference way: a listing per repository, a payload call per changed Item and per open pull request
  const reference = REPOS * (1 + CHANGED_ISSUES + OPEN_PULLS);
  if (outcomes.length !== REPOS) throw new Error(`${outcomes.length} repositories polled, not ${REPOS}`);
  bench("poll_cycle_calls", calls, `calls (${counts.rest} REST, ${counts.notModified} 304, ${counts.graphql} GraphQL; reference ${reference})`);
  console.log(`# poll cycle sends: ${JSON.stringify(sim.counters.byRoute)}`);
  bench("poll_cycle_ms", cycleMs, "ms");
  ratio("poll_calls_vs_reference", calls / reference);

  // Hint latency: a label put on an issue → webhook → Hint → Run in Postgres
  await github.probot.load(atelierApp({ db, workQueue, log: silentLog , onCheckRunAction: async () => ({ tag: "Ignored", reason: "not_an_action" }), onDashboardIssue: async () => null }));
  const received = new Map<number, number>();
  const server = createServer(
    nodeWebhookHandler(async (request) => {
      const at = performance.now();
      try {
        const payload = JSON.parse(request.body) as { issue?: { number?: number }; action?: string };
        if (payload.action === "labeled" && payload.issue?.number) received.set(payload.issue.number, at);
      } catch {
        /* measured deliveries are JSON */
      }
      return receiveWebhook({ db, probot: github.probot, secret: settings.webhookSecret, log: silentLog }, request);
    }),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  sim.setWebhookUrl({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
  const worker = createHintWorker(bullConnection(), deps, { prefix });
  await worker.waitUntilReady();
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  await listener.query(`LISTEN ${RUN_CHANGED_CHANNEL}`);
  const visible = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  listener.on("notification", (n) => {
    if (!n.payload) return;
    visible.set(n.payload, performance.now());
    waiters.get(n.payload)?.();
  });

  const target = names[0]!;
  const latencies: number[] = [];
  const candidates = sim.state.itemsOf(sim.state.repoByFullName(target)).filter((i) => !i.pull && i.labels.length === 0).slice(0, HINT_SAMPLES);
  for (const item of candidates) {
    sim.addLabels({ repo: target, number: item.number, labels: ["ready-for-agent"] });
    const runId = await waitForRun(db, target, item.number, 5_000);
    await new Promise<void>((resolve) => {
      if (visible.has(runId)) resolve();
      else waiters.set(runId, resolve);
    });
    latencies.push(visible.get(runId)! - received.get(item.number)!);
  }
  bench("hint_to_run_p50_ms", percentile(latencies, 50), "ms");
  bench("hint_to_run_p99_ms", percentile(latencies, 99), "ms");

  await listener.end();
  await worker.close();
  server.closeAllConnections();
  server.close();
  for (const name of Object.values(QUEUE_NAMES)) await workQueue.queue(name).obliterate({ force: true }).catch(() => undefined);
  await workQueue.close();
  await sim.close();
  await db.close();
  await adaptiveBench(url);
}

const MANY_REPOS = 1_000;
const TICK_MS = 15_000;
const HOUR_MS = 3_600_000;
const DETECT_SAMPLES = 12;

/** 1,000 quiet repositories (a config from the owner's .github repository, 6 Items each) over a simulated hour. */
async function adaptiveBench(url: string): Promise<void> {
  const db = createDb(url, 20);
  await db.pool.query(`TRUNCATE repositories, installations RESTART IDENTITY CASCADE`);
  const sim = await startSimulator({});
  sim.createOrg({ login: "many" });
  sim.createUser({ login: "octo" });
  sim.setDefaultUser({ login: "octo" });
  await sim.createRepo({ owner: "many", name: ".github", files: { ".github/atelier.yml": CONFIG } });
  const names: string[] = [];
  for (let r = 0; r < MANY_REPOS; r++) names.push((await sim.createRepo({ owner: "many", name: `r${r}` })).fullName.toLowerCase());
  sim.createInstallation({ account: "many" });
  const author = sim.state.findAccount("octo")!.id;
  for (const fullName of names) {
    sim.createLabel({ repo: fullName, name: "ready-for-agent", color: "0e8a16" });
    sim.createLabel({ repo: fullName, name: "ready-for-review", color: "1d76db" });
    for (let i = 0; i < 4; i++) sim.createIssue({ repo: fullName, title: `Issue ${i}`, body: "" });
    for (let i = 0; i < 2; i++) forceMergeable(createPull(sim.state, sim.state.repoByFullName(fullName), { title: `PR ${i}`, head: `b${i}`, headSha: "a".repeat(40), base: "main", baseSha: "a".repeat(40) }, author), true);
  }
  const settings = sim.appSettings();
  const github = createGitHubApp(settings, { log: silentLog });
  const prefix = `bench-adaptive-${process.pid}`;
  const workQueue = new BullWorkQueue({ connection: bullConnection(), prefix, db, pollIntervalSeconds: 60 });
  const deps = createTriggerDeps({ db, github, workQueue, roster: defaultInstanceConfig(), log: silentLog, clock: { now: () => sim.now().epochMs }, repositoryConcurrency: 8 });
  await reconcileInstallations(deps);
  const installation = [...sim.state.installations.values()][0]!.id;
  sim.setRateLimit({ caller: `installation:${installation}`, limit: 1_000_000 });
  const tick = async () => {
    sim.advanceClock({ ms: TICK_MS });
    const outcomes = await pollDueRepositories(deps);
    const failed = outcomes.find((o) => o.status === "failed");
    if (failed) throw new Error(`poll failed: ${JSON.stringify(failed)}`);
  };
  // the first minutes read every repository once, then they settle and back off
  for (let t = 0; t < 600_000; t += TICK_MS) await tick();

  sim.resetCounters();
  const labeled: { repo: string; number: number; at: number; seenAfterS: number | null }[] = [];
  const perMinute: number[] = [];
  let minute = 0;
  let points = 0;
  const start = sim.now().epochMs;
  for (let t = 0; t < HOUR_MS; t += TICK_MS) {
    const sample = Math.floor((t / HOUR_MS) * DETECT_SAMPLES);
    if (labeled.length === sample && sample < DETECT_SAMPLES) {
      // an issue of a repository spread over the installation, labeled with no webhook sent
      const repo = names[(sample * 83 + 17) % MANY_REPOS]!;
      const issue = sim.state.itemsOf(sim.state.repoByFullName(repo)).find((i) => !i.pull)!;
      sim.addLabels({ repo, number: issue.number, labels: ["ready-for-agent"] });
      labeled.push({ repo, number: issue.number, at: sim.now().epochMs, seenAfterS: null });
    }
    await tick();
    for (const l of labeled.filter((x) => x.seenAfterS === null)) {
      const { rowCount } = await db.pool.query(`SELECT 1 FROM runs WHERE repo = $1 AND number = $2`, [l.repo, l.number]);
      if (rowCount) l.seenAfterS = (sim.now().epochMs - l.at) / 1000;
    }
    const counts = sim.counters.byCaller[`installation:${installation}`] ?? { rest: 0, notModified: 0, graphql: 0, git: 0 };
    if ((t + TICK_MS) % 60_000 === 0) {
      perMinute.push(counts.rest + counts.notModified + counts.graphql - minute);
      minute = counts.rest + counts.notModified + counts.graphql;
    }
    points = counts.rest + counts.graphql;
  }
  const missed = labeled.filter((l) => l.seenAfterS === null);
  if (missed.length) throw new Error(`${missed.length} labeled Items never seen by polling`);
  bench("poll_idle_requests_per_min", Math.max(...perMinute), `requests at peak over ${perMinute.length} virtual minutes, ${MANY_REPOS} repositories (median ${percentile(perMinute, 50)})`);
  bench("poll_primary_points_per_hour", (points * HOUR_MS) / (sim.now().epochMs - start), "points (REST not 304 + GraphQL queries)");
  bench("poll_only_detect_p99_s", percentile(labeled.map((l) => l.seenAfterS!), 99), `s, ${DETECT_SAMPLES} Items labeled without a webhook`);

  for (const name of Object.values(QUEUE_NAMES)) await workQueue.queue(name).obliterate({ force: true }).catch(() => undefined);
  await workQueue.close();
  await sim.close();
  await db.close();
}

async function waitForRun(db: ReturnType<typeof createDb>, repo: string, number: number, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM runs WHERE repo = $1 AND number = $2 AND loop = 'start-dev'`, [repo, number]);
    if (rows[0]) return rows[0].id;
    if (Date.now() > until) throw new Error(`no Run for ${repo}#${number} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
