// Insights at scale: 1,000,000 Runs of 50 repositories received over two years (about 1,400 a
// day), one Attempt per started Run, their pull requests merged, closed or open; then an admin's
// Insights of the default range (the last 12 weeks: about 106,000 of them) read as the API does,
// from the roll-up the Runs keep (ADR 0092), and, for reference, of the last 366 days (the
// longest range). Seeded with generate_series, in SQL.
import { setInstanceConfigForTests } from "../../lib/auth/instance-config";
import { makeViewer } from "../../lib/auth/viewer";
import { defaultInstanceConfig } from "../../lib/config/roster";
import { getInsights } from "../../lib/dashboard/insights";
import { createDb, type Db } from "../../lib/store/kernel/db";
import { prepareDatabase, siblingDatabase } from "./database";
import { bench, p50 } from "./measure";

const REPOS = 50;
const RUNS = 1_000_000;
const DAYS = 730;
const READ_ROUNDS = 9;

/**
 * Run i: repository 1 + i mod 50, Item 1 + i div 50, received i × (730 days ÷ 1,000,000) ago.
 * Outcomes by a roll of i: 45 % merged, 10 % closed unmerged, 5 % open, 10 % no pull request,
 * 18 % Failed, 12 % Canceled (never started); started 5 s to 50 min after the trigger.
 */
const HISTORY = `
  SELECT i, 1 + i % ${REPOS} AS r, 1 + i / ${REPOS} AS n, (i::bigint * 7919) % 100 AS roll,
         date_trunc('milliseconds', now() AT TIME ZONE 'UTC' - (i::float8 * ${(DAYS * 86400) / RUNS}) * interval '1 second') AS at,
         5 + (i::bigint * 104729) % 3000 AS start_s
    FROM generate_series(0, ${RUNS - 1}) i`;

/** The Attempt of history row i: its cost, its minutes, whether verify checked it and passed, its failure's category. */
const ATTEMPT_COST = "(0.05 + (i % 200) / 100.0)";
const ATTEMPT_MS = "(60000 + (i % 1200) * 1000)";
const VERIFIED = "(i % 2 = 0 AND roll < 70)";
const PASSED = "(i % 10 <> 0)";
const CATEGORY = "(ARRAY['agent','infra','verify'])[1 + i % 3]";

async function seed(db: Db): Promise<void> {
  await db.pool.query(`INSERT INTO installations (id, account_login, updated_at) VALUES (42, 'bench', now())`);
  await db.pool.query(
    `INSERT INTO repositories (id, installation_id, full_name, config, updated_at)
     SELECT 9000 + r, 42, 'bench/insights-' || r, '{"loops":[{"name":"start-dev","trigger":{"kind":"issues"}},{"name":"review","trigger":{"kind":"pull_requests"}}]}', now()
       FROM generate_series(1, ${REPOS}) r`,
  );
  // a bulk load: the triggers that keep each Item's current Run set aside (the Runs are all closed)
  await db.pool.query(`ALTER TABLE runs DISABLE TRIGGER USER`);
  await db.pool.query(
    `INSERT INTO runs (id, event_id, loop, repo, repository_id, item_key, number, state, agent, prompt, approval_required, received_at, started_at, ended_at,
                       pull_request_number, pull_request_at, pull_request_state, pull_request_closed_at,
                       attempts_closed, attempts_cost_usd, attempts_ms, verify_checked, verify_passed, failure_categories)
     SELECT 'ir-' || i, 'ie-' || i, CASE WHEN i % 3 = 0 THEN 'review' ELSE 'start-dev' END, 'bench/insights-' || r, 9000 + r,
            format('["github","bench/insights-%s",%s]', r, n), n,
            (CASE WHEN roll < 70 THEN 'Succeeded' WHEN roll < 88 THEN 'Failed' ELSE 'Canceled' END)::"RunState",
            CASE WHEN i % 4 = 0 THEN 'codex' ELSE 'demo' END, 'Implement it', false, at,
            CASE WHEN roll < 88 THEN at + start_s * interval '1 second' END, at + interval '2 hours',
            CASE WHEN roll < 60 THEN 100000 + n END,
            CASE WHEN roll < 60 THEN at + (start_s + 600) * interval '1 second' END,
            CASE WHEN roll < 45 THEN 'merged' WHEN roll < 55 THEN 'closed' END,
            CASE WHEN roll < 55 THEN at + (start_s + 600 + (i % 86400)) * interval '1 second' END,
            -- what the trigger attempts_roll_up_into_run keeps of the one Attempt below
            (roll < 88)::int, CASE WHEN roll < 88 THEN ${ATTEMPT_COST} ELSE 0 END, CASE WHEN roll < 88 THEN ${ATTEMPT_MS} ELSE 0 END,
            (${VERIFIED})::int, (${VERIFIED} AND ${PASSED})::int,
            CASE WHEN roll >= 70 AND roll < 88 THEN ARRAY[${CATEGORY}] ELSE ARRAY[]::text[] END
       FROM (${HISTORY}) h`,
  );
  await db.pool.query(`ALTER TABLE runs ENABLE TRIGGER USER`);
  await db.pool.query(`ALTER TABLE attempts DISABLE TRIGGER USER`);
  await db.pool.query(
    `INSERT INTO attempts (id, run_id, number, state, started_at, ended_at, failure_kind, failure_category, cost_usd, duration_ms, verify)
     SELECT 'ir-' || i || '/agent/1', 'ir-' || i, 1, (CASE WHEN roll < 70 THEN 'Succeeded' ELSE 'Failed' END)::"AttemptState",
            at + start_s * interval '1 second', at + (start_s + 600) * interval '1 second',
            CASE WHEN roll >= 70 THEN 'AgentFailure' END, CASE WHEN roll >= 70 THEN ${CATEGORY} END, ${ATTEMPT_COST}, ${ATTEMPT_MS},
            CASE WHEN ${VERIFIED} THEN jsonb_build_object('passed', ${PASSED}, 'command', 'npm test', 'durationMs', 1000, 'tail', '', 'rounds', 1, 'timedOut', false, 'exitCode', 0) END
       FROM (${HISTORY}) h WHERE roll < 88`,
  );
  await db.pool.query(`ALTER TABLE attempts ENABLE TRIGGER USER`);
  // the roll-up Insights reads, as the migration that made it fills it from the Runs (ADR 0092)
  await db.pool.query(`SELECT insights_days_apply(r, 1) FROM runs r ORDER BY r.repository_id, r.received_at`);
  await db.pool.query(`VACUUM ANALYZE runs, attempts, insights_days`);
}

export async function insightsBench(url: string): Promise<void> {
  const dbUrl = siblingDatabase(url, "insights");
  await prepareDatabase(dbUrl);
  const db = createDb(dbUrl, 4);
  const t0 = performance.now();
  await seed(db);
  const count = (await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM runs`)).rows[0]!.n;
  console.log(`# insights: ${count} Runs seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  setInstanceConfigForTests({ ...defaultInstanceConfig(), admins: ["bench-admin"] });
  const admin = makeViewer({ id: "1", login: "bench-admin", name: null, avatarUrl: null }, null, new Set(["1"]));
  const ctx = { db };
  const shown = await getInsights(ctx, admin, {});
  console.log(`# insights: the default range reads ${shown.totals.runs} Runs`);
  bench("insights_p50_ms", await p50(READ_ROUNDS, () => getInsights(ctx, admin, {})), "ms");
  const today = new Date();
  const from = new Date(today.getTime() - 365 * 86_400_000).toISOString().slice(0, 10);
  bench("insights_366_days_p50_ms", await p50(3, () => getInsights(ctx, admin, { from })), "ms");
  setInstanceConfigForTests(undefined);
  await db.close();
}
