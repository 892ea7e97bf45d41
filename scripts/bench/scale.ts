// The store at scale. First the claim (recordAndClaim, 8 lanes, as fast as they go) in paired
// rounds against two databases, one empty and one holding 1,000,000 historical Events and 200,000 Runs (the 400
// Items the claim works on among them, each with closed Runs of its own): the ratio is the
// median of the rounds' own ratios. Then the history grows to 1,000,000 Runs on 50,000 Items
// (50 repositories, 20 Runs per Item, one Attempt per started Run), and the Board's page and
// Needs you are read as an admin sees them. Seeded with generate_series, in SQL.
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { makeViewer } from "../../lib/auth/viewer";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { loadNeedsYou } from "../../lib/dashboard/needs-you";
import { getBoard } from "../../lib/dashboard/queries";
import { itemEventKey, itemKey } from "../../lib/engine/ids";
import { createDb, type Db } from "../../lib/store/kernel/db";
import { recordAndClaim, type EventInput } from "../../lib/store/runs/claim";
import { prepareDatabase, siblingDatabase } from "./database";
import { bench, median, p50, ratio, throughput } from "./measure";
import { itemColumnsSql } from "./seed-items";

const REPOS = 50;
const ITEMS = 50_000;
const EVENTS = 1_000_000;
const CLAIM_RUNS = 200_000;
const READ_ROUNDS = 9;
const CLAIM_ROUNDS = 5;
const CLAIMS_PER_ROUND = 1500;
const CLAIM_LANES = 8;
const CLAIM_ITEMS = 400;

/** Claim `i` of a round: mostly new content on 400 Items of bench/claim; every 10th repeats an earlier one. */
function claimEvent(round: number, i: number): EventInput {
  const n = (i % CLAIM_ITEMS) + 1;
  const hash = i % 10 === 9 ? `r${round}-${i - 9}` : `r${round}-${i}`;
  const repo = "bench/claim";
  return {
    id: itemEventKey("start-dev", repo, n, hash, 0),
    kind: "item",
    loop: "start-dev",
    repo,
    itemKey: itemKey(repo, n),
    number: n,
    contentHash: hash,
    generation: 0,
    submission: { prompt: "Implement it", agent: "demo", approvalRequired: false, maxCycles: null },
  };
}

/** One round of claims on 8 lanes: Events/s. */
const claimRound = (db: Db, round: number): Promise<number> =>
  throughput(CLAIMS_PER_ROUND, CLAIM_LANES, (i) => recordAndClaim(db, claimEvent(round, i)).then(() => undefined));

/** Repository r (1-based) of the seed; the first is the claim benchmark's own. */
const repoSql = (r: string) => `CASE WHEN ${r} = 1 THEN 'bench/claim' ELSE 'bench/scale-' || ${r} END`;

/**
 * History row i (0 ≤ i < EVENTS): Item j = i mod ITEMS, its k-th observation (k = i div ITEMS,
 * 0…19), of the Loop start-dev for even k and review for odd. Its Run, when it has one, is
 * closed — 80 % Succeeded, 12 % Failed (1 in 12 of them unresolved), 8 % Canceled — except the
 * last Run of each Loop (k ≥ 18) on a fifth of the Items, which is open (Pending, Waiting,
 * Queued or Running): never two open Runs of one Loop on one Item (nor on the claim
 * benchmark's repository, whose Items the claims left with open Runs).
 */
const HISTORY = `
  SELECT i, j, k, 1 + j % ${REPOS} AS r, 1 + j / ${REPOS} AS n,
         CASE WHEN k % 2 = 0 THEN 'start-dev' ELSE 'review' END AS loop,
         now() - ((20 - k) || ' days')::interval - (j || ' seconds')::interval AS at,
         CASE WHEN k >= 18 AND j % 10 < 2 AND j % ${REPOS} <> 0 THEN (ARRAY['Pending','Waiting','Queued','Running'])[1 + j % 4]
              WHEN (i::bigint * 7919) % 100 < 80 THEN 'Succeeded'
              WHEN (i::bigint * 7919) % 100 < 92 THEN 'Failed'
              ELSE 'Canceled' END AS state
    FROM generate_series($1::int, $2::int - 1) i,
         LATERAL (SELECT i % ${ITEMS} AS j, i / ${ITEMS} AS k) jk`;

/** The first `count` Items of the seed (all, or only those of the claim benchmark's repository: every REPOS-th). */
const insertItems = (db: Db, count: number, onlyClaims = false) =>
  db.pool.query(
    `INSERT INTO items (key, repo, number, kind, state, title, labels, projection, content_hash, github_updated_at)
     SELECT format('["github","%s",%s]', ${repoSql("r")}, n), ${repoSql("r")}, n,${itemColumnsSql("j")}
       FROM generate_series(0, ${count - 1}) j, LATERAL (SELECT 1 + j % ${REPOS} AS r, 1 + j / ${REPOS} AS n) rn
      WHERE ${onlyClaims} IS FALSE OR r = 1`,
  );

/** The seed's repositories, registered (all, or only the claim benchmark's). */
async function registerRepositories(db: Db, onlyClaims = false): Promise<void> {
  await db.pool.query(`INSERT INTO installations (id, account_login, updated_at) VALUES (42, 'bench', now()) ON CONFLICT DO NOTHING`);
  await db.pool.query(
    `INSERT INTO repositories (id, installation_id, full_name, config, updated_at)
     SELECT 9000 + r, 42, ${repoSql("r")}, '{"loops":[{"name":"start-dev","trigger":{"kind":"issues"}},{"name":"review","trigger":{"kind":"pull_requests"}}]}', now()
       FROM generate_series(1, ${REPOS}) r
      WHERE ${onlyClaims} IS FALSE OR r = 1`,
  );
}

async function seedItems(db: Db): Promise<void> {
  await registerRepositories(db);
  await insertItems(db, ITEMS);
  await db.pool.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, status, run_id, submission, received_at)
     SELECT 'h-' || i, 'item', loop, ${repoSql("r")}, format('["github","%s",%s]', ${repoSql("r")}, n), n, md5(i::text),
            'Claimed', 'hr-' || i, '{}', at
       FROM (${HISTORY}) h`,
    [0, EVENTS],
  );
  await db.pool.query(
    `INSERT INTO cycle_budgets (item_key, repo, generation, ask, asked_at)
     SELECT key, repo, 0, '{"reserved":3,"maxCycles":3}', now() FROM items WHERE number % 97 = 0`,
  );
}

/**
 * The Runs (and their Attempts) of history rows from ≤ i < to. Loaded as a bulk load is: with
 * the triggers that keep each Item's current Run set aside, then every Item's refreshed at once.
 */
async function seedRuns(db: Db, from: number, to: number): Promise<void> {
  await db.pool.query(`ALTER TABLE runs DISABLE TRIGGER USER`);
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required,
                       received_at, started_at, ended_at, waiting_reason, pull_request_number, failed_attempt_id, resolved_failure_attempt_id)
     SELECT 'hr-' || i, 'h-' || i, loop, ${repoSql("r")}, format('["github","%s",%s]', ${repoSql("r")}, n), n, state::"RunState",
            'demo', 'Implement it', true, at,
            CASE WHEN state NOT IN ('Pending','Waiting','Queued') THEN at END,
            CASE WHEN state IN ('Succeeded','Failed','Canceled') THEN at + interval '10 minutes' END,
            CASE WHEN state = 'Waiting' THEN 'approval' END,
            CASE WHEN k < 2 THEN n + 100000 END,
            CASE WHEN state = 'Failed' THEN 'hr-' || i || '/agent/1' END,
            CASE WHEN state = 'Failed' AND i % 12 <> 0 THEN 'hr-' || i || '/agent/1' END
       FROM (${HISTORY}) h`,
    [from, to],
  );
  await db.pool.query(
    `INSERT INTO attempts (id, run_id, number, state, started_at, ended_at, failure_kind)
     SELECT 'hr-' || i || '/agent/1', 'hr-' || i, 1,
            (CASE WHEN state = 'Running' THEN 'Running' ELSE state END)::"AttemptState", at,
            CASE WHEN state <> 'Running' THEN at + interval '10 minutes' END,
            CASE WHEN state = 'Failed' THEN 'AgentFailure' END
       FROM (${HISTORY}) h WHERE state NOT IN ('Pending','Waiting','Queued')`,
    [from, to],
  );
  await db.pool.query(`ALTER TABLE runs ENABLE TRIGGER USER`);
  await db.pool.query(`SELECT items_refresh_current_runs()`);
}

/** Autovacuum's work on a table that long had these rows: statistics, and the visibility map. */
const settle = (db: Db) => db.pool.query(`VACUUM ANALYZE items, events, runs, attempts, cycle_budgets`);

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  console.log(`# scale: ${label} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return out;
}

export async function scaleBench(url: string): Promise<void> {
  const emptyUrl = siblingDatabase(url, "scale_empty");
  const loadedUrl = siblingDatabase(url, "scale");
  await Promise.all([prepareDatabase(emptyUrl), prepareDatabase(loadedUrl)]);
  const seeder = createDb(loadedUrl, 2);
  // the claim's repository is registered and its Items stored on both (a poll stores an Item
  // before it claims), so both pay the same writes (a registered repository's Runs roll up into Insights)
  const emptySeeder = createDb(emptyUrl, 1);
  await registerRepositories(emptySeeder, true);
  await insertItems(emptySeeder, ITEMS, true);
  await emptySeeder.close();
  await timed(`${EVENTS} Events on ${ITEMS} Items`, () => seedItems(seeder));
  await timed(`${CLAIM_RUNS} Runs`, () => seedRuns(seeder, 0, CLAIM_RUNS));
  await settle(seeder);

  // the claim, paired: a round on the empty database, then one on the loaded one
  const empty = createDb(emptyUrl);
  const loaded = createDb(loadedUrl);
  const onEmpty: number[] = [];
  const onLoaded: number[] = [];
  for (let round = 0; round <= CLAIM_ROUNDS; round++) {
    const e = await claimRound(empty, round);
    const l = await claimRound(loaded, round);
    if (round === 0) continue; // warm-up
    onEmpty.push(e);
    onLoaded.push(l);
  }
  bench("claim_empty_events_per_s", median(onEmpty), "events/s");
  bench("claim_at_1m_events_per_s", median(onLoaded), "events/s");
  ratio("claim_at_1m_vs_empty", median(onLoaded.map((l, i) => l / onEmpty[i]!)));
  await Promise.all([empty.close(), loaded.close()]);

  await timed(`${EVENTS - CLAIM_RUNS} more Runs`, () => seedRuns(seeder, CLAIM_RUNS, EVENTS));
  await settle(seeder);
  const counts = await seeder.pool.query<{ items: string; runs: string; events: string }>(
    `SELECT (SELECT count(*) FROM items) AS items, (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM events) AS events`,
  );
  const c = counts.rows[0]!;
  console.log(`# scale: ${c.items} Items, ${c.runs} Runs, ${c.events} Events in ${REPOS} repositories`);

  const config = defaultInstanceConfig();
  setInstanceConfigForTests({ ...config, admins: ["bench-admin"] });
  const admin = makeViewer({ id: "1", login: "bench-admin", name: null, avatarUrl: null }, null, new Set(["1"]));
  const repos = (await seeder.pool.query<{ full_name: string }>(`SELECT full_name FROM repositories ORDER BY full_name`)).rows.map((r) => r.full_name);
  bench("board_50000_items_p50_ms", await p50(READ_ROUNDS, () => getBoard({ db: seeder }, admin, {})), "ms");
  bench("needs_you_p50_ms", await p50(READ_ROUNDS, () => loadNeedsYou(seeder, repos)), "ms");
  setInstanceConfigForTests(undefined);
  await seeder.close();
}
