// A /metrics scrape with 10,000 Runs in the database: the registry's counters (kept as the work
// happened) and the scrape-time gauges (one grouped read of `runs`, one of `repositories`),
// measured beside a bare `SELECT 1` round trip. Goal: p50 ≤ 50 ms.
import { readGaugesFrom } from "../../lib/metrics/gauges";
import { countAttemptOutcome, countRunTransition, metrics } from "../../lib/metrics/metrics";
import { scrapeMetrics } from "../../lib/metrics/scrape";
import { createDb, type Db } from "../../lib/store/db";
import { bench, percentile, ratio } from "./measure";

const RUNS = 10_000;
const REPOS = 20;
const ROUNDS = 100;
const STATES = ["Pending", "Waiting", "Queued", "Running", "Succeeded", "Failed", "Canceled"];

async function seed(db: Db): Promise<void> {
  await db.pool.query(`INSERT INTO installations (id, account_login, updated_at) VALUES (43, 'bench-metrics', now()) ON CONFLICT DO NOTHING`);
  await db.pool.query(
    `INSERT INTO repositories (id, installation_id, full_name, last_polled_at, updated_at)
     SELECT 19000 + r, 43, 'bench/metrics-' || r, now() - (r || ' seconds')::interval, now() FROM generate_series(1, ${REPOS}) r ON CONFLICT DO NOTHING`,
  );
  await db.pool.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission, received_at)
     SELECT 'mev-' || i, 'item', 'start-dev', 'bench/metrics-' || (1 + i % ${REPOS}), format('["github","bench/metrics-%s",%s]', 1 + i % ${REPOS}, i), i,
            'Claimed', 'mrun-' || i, '{}', now() - (i || ' seconds')::interval
       FROM generate_series(1, ${RUNS}) i`,
  );
  // mostly finished Runs, a few open ones of every open state (one open Run per Item)
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at)
     SELECT e.run_id, e.id, e.loop, e.repo, e.item_key, e.number,
            (ARRAY[${STATES.map((s) => `'${s}'`).join(",")}])[1 + (e.number % 7)]::"RunState", 'demo', 'Bench', false, e.received_at
       FROM events e WHERE e.id LIKE 'mev-%'`,
  );
  await db.pool.query(`ANALYZE runs; ANALYZE repositories`);
  // counters as a busy day leaves them
  for (let i = 0; i < 1_000; i++) {
    countRunTransition(STATES[i % STATES.length]!);
    countAttemptOutcome(i % 5 ? "Succeeded" : "Failed", i % 5 ? null : "agent_exit", 1_000 + i * 37);
    metrics.webhookDeliveries.inc({ outcome: "accepted" });
  }
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function metricsBench(url: string): Promise<void> {
  const db = createDb(url, 4);
  await seed(db);
  readGaugesFrom(db);
  const count = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs`);
  console.log(`# metrics: ${count.rows[0]!.n} Runs in ${REPOS} repositories`);
  for (let i = 0; i < 10; i++) await scrapeMetrics(null, null); // warm: plans, pool, code
  const scrape: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    scrape.push(await timed(() => scrapeMetrics(null, null)));
    floor.push(await timed(() => db.pool.query("SELECT 1")));
  }
  const p50 = percentile(scrape, 50);
  bench("metrics_scrape_ms", p50, "ms");
  bench("metrics_scrape_p95_ms", percentile(scrape, 95), "ms");
  ratio("metrics_scrape_vs_round_trip", p50 / percentile(floor, 50));
  readGaugesFrom(null);
  await db.close();
}
