// A burst in one repository: 1,000 issues get the trigger label at once (a triage session, a
// bulk edit) and the next poll finds them all. Measured: from the start of that poll cycle to
// every Event claimed — the product's whole path against the GitHub simulator (in process, real
// HTTP): the listing, the Items' payloads and their actors by GraphQL, each Loop's `if:`, and
// recordAndClaim through the admission gate the wiring gives every process. The repository's
// open rate is set to admit the whole burst (the default, 30 a minute, would block all but 30:
// still a decision per Event, but a cheaper one), so every Event opens a Run and charges the
// month's counters. In rounds on fresh repositories, after a warm-up round; the median.
import { reconcileInstallations } from "../../lib/github/installation-sync";
import { createGitHubApp } from "../../lib/github/app-client";
import { silentLog } from "../../lib/github/log";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { admission } from "../../lib/metering/admission";
import { startSimulator } from "../../lib/sandbox/index";
import { createDb } from "../../lib/store/kernel/db";
import { createTriggerDeps } from "../../lib/triggers/deps";
import { pollDueRepositories } from "../../lib/triggers/poll-installation";
import { MAX_POLL_INTERVAL_SECONDS } from "../../lib/triggers/poll-interval";
import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { bench, median } from "./measure";

const ITEMS = 1000;
const ROUNDS = 3;

const CONFIG = `labels:
  - { name: ready-for-agent, color: 0e8a16 }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: demo
    prompt: Implement #\${{ item.number }} \${{ item.title }}
`;

export async function burstBench(url: string): Promise<void> {
  const db = createDb(url, 20);
  const sim = await startSimulator({});
  sim.createOrg({ login: "burst" });
  sim.createUser({ login: "octo" });
  sim.setDefaultUser({ login: "octo" });
  const names: string[] = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const { fullName } = await sim.createRepo({ owner: "burst", name: `repo-${r}`, files: { ".github/atelier.yml": CONFIG } });
    sim.setUserPermission({ repo: fullName, login: "octo", permission: "write" });
    sim.createLabel({ repo: fullName, name: "ready-for-agent", color: "0e8a16" });
    for (let i = 0; i < ITEMS; i++) sim.createIssue({ repo: fullName, title: `Issue ${i}`, body: `Body ${i}` });
    names.push(fullName.toLowerCase());
  }
  sim.createInstallation({ account: "burst" });
  const github = createGitHubApp(sim.appSettings(), { log: silentLog });
  const workQueue = new BullWorkQueue({ connection: bullConnection(), prefix: `bench-burst-${process.pid}`, db, pollIntervalSeconds: 60 });
  const deps = createTriggerDeps({ db, github, workQueue, roster: defaultInstanceConfig(), log: silentLog, admission: admission(), clock: { now: () => sim.now().epochMs } });
  const tick = async () => {
    // past the longest interval: every repository is due
    sim.advanceClock({ ms: (MAX_POLL_INTERVAL_SECONDS + 1) * 1000 });
    const outcomes = await pollDueRepositories(deps);
    const failed = outcomes.filter((o) => o.status !== "polled" && o.status !== "quiet");
    if (failed.length) throw new Error(`bench: a poll failed: ${JSON.stringify(failed[0])}`);
  };
  await reconcileInstallations(deps);
  // every repository read once, with nothing matching: the next cycle sees only the burst
  await tick();
  await tick();
  await db.pool.query(
    `INSERT INTO quotas (repository_id, open_rate_per_minute) SELECT id, $2 FROM repositories WHERE full_name = ANY($1::text[])`,
    [names, ITEMS * 10],
  );

  const seconds: number[] = [];
  for (const repo of names) {
    for (let n = 1; n <= ITEMS; n++) sim.addLabels({ repo, number: n, labels: ["ready-for-agent"] });
    const t0 = performance.now();
    await tick();
    const elapsed = (performance.now() - t0) / 1000;
    const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE repo = $1`, [repo]);
    if (rows[0]!.n !== ITEMS) throw new Error(`bench: ${rows[0]!.n} Runs opened in ${repo}, not ${ITEMS}`);
    if (repo !== names[0]) seconds.push(elapsed);
  }

  await workQueue.queue("attempts").obliterate({ force: true });
  await workQueue.close();
  await sim.close();
  await db.close();
  bench("burst_1000_items_claim_s", median(seconds), `s (a poll that finds ${ITEMS} new matching Items in one repository, until every Event is claimed)`);
}
