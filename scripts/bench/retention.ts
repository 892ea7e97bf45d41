// What a Run costs the database, before and after retention (ADR 0085): 5,000 closed Runs, each
// with its Event (a 4 kB rendered prompt in its payload), one Attempt with a 200-line transcript
// and two audit rows, all 120 days old. The database's size over the empty one's, per Run, is read
// whole (`db_bytes_per_run_whole`), then after one retention sweep with the default days and a
// VACUUM FULL that gives the freed pages back (`db_bytes_per_run`). Seeded with generate_series.
import { defaultInstanceConfig } from "../../lib/config/roster";
import { pruneHistory } from "../../lib/retention/prune-history";
import { createDb, type Db } from "../../lib/store/kernel/db";
import { prepareDatabase, siblingDatabase } from "./database";
import { bench } from "./measure";

const RUNS = 5_000;
const LINES = 200;

async function seed(db: Db): Promise<void> {
  const history = `SELECT i, (now() AT TIME ZONE 'UTC') - interval '120 days' + i * interval '1 second' AS at FROM generate_series(1, ${RUNS}) i`;
  // two Events per Item, the newer keeping its payload: half the Items' Events are shed
  await db.pool.query(
    `INSERT INTO events (id, kind, loop, repo, item_key, number, content_hash, status, run_id, submission, received_at)
     SELECT 'be-' || i, 'item', 'start-dev', 'bench/retention', format('["github","bench/retention",%s]', (i + 1) / 2), (i + 1) / 2, md5(i::text),
            'Claimed', 'br-' || i, jsonb_build_object('prompt', repeat('Implement the change as the issue says. ', 100), 'agent', 'demo'), at
       FROM (${history}) h`,
  );
  await db.pool.query(`ALTER TABLE runs DISABLE TRIGGER USER`);
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, item_key, number, state, agent, prompt, approval_required, received_at, started_at, ended_at)
     SELECT 'br-' || i, 'be-' || i, 'start-dev', 'bench/retention', format('["github","bench/retention",%s]', (i + 1) / 2), (i + 1) / 2,
            'Succeeded', 'demo', repeat('Implement the change as the issue says. ', 100), false, at, at, at + interval '10 minutes'
       FROM (${history}) h`,
  );
  await db.pool.query(`ALTER TABLE runs ENABLE TRIGGER USER`);
  await db.pool.query(
    `INSERT INTO attempts (id, run_id, number, state, started_at, ended_at, summary, duration_ms, cost_usd)
     SELECT 'br-' || i || '/agent/1', 'br-' || i, 1, 'Succeeded', at, at + interval '10 minutes', 'Did the change and its test.', 600000, 0.4
       FROM (${history}) h`,
  );
  await db.pool.query(
    `INSERT INTO transcript_entries (attempt_id, run_id, stream, text, at)
     SELECT 'br-' || i || '/agent/1', 'br-' || i, 'stdout', 'step ' || n || ': ' || repeat('the agent read a file and ran the tests. ', 6), at
       FROM (${history}) h, generate_series(1, ${LINES}) n`,
  );
  await db.pool.query(
    `INSERT INTO audit_log (at, actor, action, repo, run_id, detail)
     SELECT at, 'octocat', action, 'bench/retention', 'br-' || i, '{"via":"dashboard"}' FROM (${history}) h, unnest(ARRAY['approve', 'push_reviewed']) action`,
  );
}

const databaseBytes = async (db: Db): Promise<number> =>
  Number((await db.pool.query<{ bytes: string }>(`SELECT pg_database_size(current_database())::text AS bytes`)).rows[0]!.bytes);

export async function retentionBench(url: string): Promise<void> {
  const dbUrl = siblingDatabase(url, "retention");
  await prepareDatabase(dbUrl);
  const db = createDb(dbUrl, 2);
  await db.pool.query(`VACUUM FULL`);
  const empty = await databaseBytes(db);
  await seed(db);
  await db.pool.query(`VACUUM FULL ANALYZE`);
  const whole = await databaseBytes(db);
  const t0 = performance.now();
  const pruned = await pruneHistory(db, defaultInstanceConfig().retention);
  console.log(`# retention: pruned ${JSON.stringify(pruned)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await db.pool.query(`VACUUM FULL`);
  const after = await databaseBytes(db);
  bench("db_bytes_per_run_whole", (whole - empty) / RUNS, "bytes");
  bench("db_bytes_per_run", (after - empty) / RUNS, "bytes");
  await db.close();
}
