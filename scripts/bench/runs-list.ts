// The Runs list with 100,000 Runs in 5 repositories: its first page, and a page 90,000 Runs
// deep reached by its keyset cursor, beside the same deep page read by OFFSET (what the list
// does not do), each an admin's read of 50 Runs of every repository.
import { encodeCursor, loadRunPage } from "../../lib/dashboard/runs-list";
import { createDb } from "../../lib/store/db";
import { bench, percentile, ratio } from "./measure";

const REPOS = 5;
const RUNS = 100_000;
const DEPTH = 90_000;
const ROUNDS = 40;

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function runsListBench(url: string): Promise<void> {
  const db = createDb(url, 2);
  await db.pool.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, status, run_id, submission)
     SELECT 'rl-ev-' || i, 'item', 'start-dev', 'bench/runs-' || (i % ${REPOS}), format('["github","bench/runs-%s",%s]', i % ${REPOS}, i / ${REPOS}),
            i / ${REPOS}, 'Claimed', 'rl-run-' || i, '{}'
       FROM generate_series(1, ${RUNS}) i`,
  );
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at)
     SELECT e.run_id, e.id, e.loop, e.repo, e.item_key, e.number,
            (ARRAY['Succeeded','Failed','Canceled'])[1 + e.number % 3]::"RunState", 'demo', 'Implement it', false,
            now() - (e.number || ' seconds')::interval
       FROM events e WHERE e.id LIKE 'rl-ev-%'`,
  );
  await db.pool.query(`ANALYZE runs`);
  const repos = Array.from({ length: REPOS }, (_, r) => `bench/runs-${r}`);
  console.log(`# runs list: ${RUNS} Runs in ${REPOS} repositories, a page of 50, ${DEPTH} Runs deep`);
  const { rows } = await db.pool.query<{ at: string; id: string }>(
    `SELECT to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, id FROM runs WHERE repo = ANY($1)
      ORDER BY received_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [repos, DEPTH - 1],
  );
  const cursor = encodeCursor(rows[0]!.at, rows[0]!.id);

  const first: number[] = [];
  const deep: number[] = [];
  const offset: number[] = [];
  for (let i = 0; i < ROUNDS + 5; i++) {
    const a = await time(() => loadRunPage(db, repos, {}));
    const b = await time(() => loadRunPage(db, repos, {}, { cursor }));
    const c = await time(() =>
      db.pool.query(`SELECT r.id FROM runs r LEFT JOIN items i ON i.key = r.item_key WHERE r.repo = ANY($1) ORDER BY r.received_at DESC, r.id DESC OFFSET $2 LIMIT 51`, [repos, DEPTH]),
    );
    if (i < 5) continue; // warm-up
    first.push(a);
    deep.push(b);
    offset.push(c);
  }
  bench("runs_list_first_page_p50_ms", percentile(first, 50), "ms");
  bench("runs_list_deep_page_p50_ms", percentile(deep, 50), "ms");
  bench("runs_list_offset_deep_page_p50_ms", percentile(offset, 50), "ms");
  ratio("runs_list_deep_vs_offset", percentile(deep, 50) / percentile(offset, 50));
  await db.close();
}
