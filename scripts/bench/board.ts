// The Board's server time with 5,000 Items and 20,000 Runs (5 repositories, 4 Runs per Item,
// one Attempt per started Run): the whole read an admin's Board page makes (scope, lanes, Loop
// names), measured beside a plain indexed SELECT of as many Items as the Board shows.
import { makeViewer } from "../../lib/auth/viewer";
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { loadBoard } from "../../lib/dashboard/board";
import { getBoard } from "../../lib/dashboard/queries";
import { createDb, type Db } from "../../lib/store/db";
import { bench, percentile, ratio } from "./measure";
import { itemColumnsSql } from "./seed-items";

const REPOS = 5;
const ITEMS = 5_000;
const RUNS_PER_ITEM = 4;
const ROUNDS = 60;

async function seed(db: Db): Promise<void> {
  await db.pool.query(`INSERT INTO installations (id, account_login, updated_at) VALUES (42, 'bench', now()) ON CONFLICT DO NOTHING`);
  await db.pool.query(
    `INSERT INTO repositories (id, installation_id, full_name, config, updated_at)
     SELECT 9000 + r, 42, 'bench/board-' || r, '{"loops":[{"name":"start-dev","trigger":{"kind":"issues"}},{"name":"review","trigger":{"kind":"pull_requests"}}]}', now()
       FROM generate_series(1, ${REPOS}) r ON CONFLICT DO NOTHING`,
  );
  // Items: numbers 1..1000 per repository; labels cycle through the lanes; 30% closed
  await db.pool.query(
    `INSERT INTO items (key, repo, number, kind, state, title, labels, projection, content_hash, github_updated_at)
     SELECT format('["github","bench/board-%s",%s]', 1 + (i % ${REPOS}), 1 + i / ${REPOS}),
            'bench/board-' || (1 + (i % ${REPOS})), 1 + i / ${REPOS},${itemColumnsSql("i")}
       FROM generate_series(0, ${ITEMS - 1}) i`,
  );
  // Runs: 3 closed ones per Item (Succeeded, Failed, Canceled), and a 4th that is open for
  // 40% of the Items (Waiting, Queued, Running) and closed for the others
  await db.pool.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission, received_at)
     SELECT 'ev-' || i || '-' || k, 'item', CASE WHEN k % 2 = 0 THEN 'start-dev' ELSE 'review' END,
            it.repo, it.key, it.number, 'Claimed', 'run-' || i || '-' || k, '{}', now() - ((4 - k) || ' hours')::interval
       FROM (SELECT row_number() OVER (ORDER BY key) - 1 AS i, key, repo, number FROM items WHERE repo LIKE 'bench/board-%') it,
            generate_series(0, ${RUNS_PER_ITEM - 1}) k`,
  );
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, started_at, pull_request_number, waiting_reason)
     SELECT e.run_id, e.id, e.loop, e.repo, e.item_key, e.number,
            (CASE
               WHEN k = 3 AND i % 10 < 4 THEN (ARRAY['Waiting','Queued','Running'])[1 + i % 3]
               ELSE (ARRAY['Succeeded','Failed','Canceled'])[1 + k % 3] END)::"RunState",
            'demo', 'Implement it', true, e.received_at, e.received_at,
            CASE WHEN k = 0 THEN e.number + 10000 END,
            CASE WHEN k = 3 AND i % 10 < 4 AND i % 3 = 0 THEN 'approval' END
       FROM (SELECT e.*, split_part(e.id, '-', 2)::int AS i, split_part(e.id, '-', 3)::int AS k FROM events e WHERE e.id LIKE 'ev-%') e`,
  );
  await db.pool.query(
    `INSERT INTO attempts (id, run_id, number, state, ended_at, failure_kind)
     SELECT r.id || '/agent/1', r.id, 1,
            (CASE r.state::text WHEN 'Running' THEN 'Running' WHEN 'Failed' THEN 'Failed' WHEN 'Canceled' THEN 'Canceled' ELSE 'Succeeded' END)::"AttemptState",
            CASE WHEN r.state::text <> 'Running' THEN now() END,
            CASE WHEN r.state::text = 'Failed' THEN 'AgentFailure' END
       FROM runs r WHERE r.id LIKE 'run-%' AND r.state::text NOT IN ('Waiting','Queued')`,
  );
  await db.pool.query(`ANALYZE items; ANALYZE runs; ANALYZE attempts; ANALYZE events`);
}

async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function boardBench(url: string): Promise<void> {
  const db = createDb(url, 4);
  await seed(db);
  const counts = await db.pool.query<{ items: string; runs: string }>(
    `SELECT (SELECT count(*) FROM items WHERE repo LIKE 'bench/board-%') AS items, (SELECT count(*) FROM runs WHERE repo LIKE 'bench/board-%') AS runs`,
  );
  console.log(`# board: ${counts.rows[0]!.items} Items, ${counts.rows[0]!.runs} Runs in ${REPOS} repositories`);

  const config = defaultInstanceConfig();
  setInstanceConfigForTests({ ...config, admins: ["bench-admin"] });
  const admin = makeViewer({ id: "1", login: "bench-admin", name: null, avatarUrl: null }, null, new Set(["1"]));
  const ctx = { db };
  const repos = Array.from({ length: REPOS }, (_, r) => `bench/board-${r + 1}`);
  const shown = (await loadBoard(db, { repos, lanes: config.board.lanes })).lanes.reduce((n, l) => n + l.cards.length, 0);

  const page: number[] = [];
  const model: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < ROUNDS + 5; i++) {
    const a = await timeIt(() => getBoard(ctx, admin, {}));
    const b = await timeIt(() => loadBoard(db, { repos, lanes: config.board.lanes }));
    const c = await timeIt(() =>
      db.pool.query(`SELECT key, repo, number, state, title, labels FROM items WHERE repo = ANY($1) ORDER BY github_updated_at DESC LIMIT $2`, [repos, shown]),
    );
    if (i < 5) continue; // warm-up
    page.push(a);
    model.push(b);
    plain.push(c);
  }
  bench("board_5000_items_p50_ms", percentile(page, 50), "ms");
  bench("board_5000_items_p95_ms", percentile(page, 95), "ms");
  bench("board_read_model_p50_ms", percentile(model, 50), "ms");
  bench("plain_items_select_p50_ms", percentile(plain, 50), "ms");
  ratio("board_vs_plain_select", percentile(page, 50) / percentile(plain, 50));
  setInstanceConfigForTests(undefined);
  await db.close();
}
