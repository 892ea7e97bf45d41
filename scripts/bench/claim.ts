// recordAndClaim Events/s against a bare one-row-insert transaction, same database, same
// concurrency (8 submitters), measured in paired rounds (a claim round, then an insert round)
// after one warm-up pair: the ratio is the median of the rounds' own ratios, so a busy moment
// weighs on both sides of one pair instead of on one side of a best-of comparison.
import pg from "pg";
import { itemEventKey, itemKey } from "../../lib/engine/ids";
import { createDb, type Db } from "../../lib/store/db";
import { recordAndClaim, type EventInput } from "../../lib/store/record-and-claim";
import { bench, median, ratio, throughput } from "./measure";

const CONCURRENCY = 8;
const PER_ROUND = 1500;
export const ROUNDS = 5;

function event(round: number, i: number): EventInput {
  // mostly new content on 400 Items; every 10th observation repeats an earlier one
  const n = (i % 400) + 1;
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

/** One round of PER_ROUND claims on CONCURRENCY lanes: Events/s. */
export const claimRound = (db: Db, round: number): Promise<number> =>
  throughput(PER_ROUND, CONCURRENCY, (i) => recordAndClaim(db, event(round, i)).then(() => undefined));

export async function claimBench(url: string): Promise<void> {
  // the product's default pool (10): 8 submitters, and room for the Run-change announcer
  const db = createDb(url);
  const raw = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  await raw.query(`CREATE TABLE IF NOT EXISTS bench_insert (id text PRIMARY KEY, body jsonb, at timestamptz DEFAULT now())`);
  const claims: number[] = [];
  const inserts: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    claims.push(await claimRound(db, round));
    inserts.push(
      await throughput(PER_ROUND, CONCURRENCY, async (i) => {
        const c = await raw.connect();
        try {
          await c.query("BEGIN");
          await c.query(`INSERT INTO bench_insert (id, body) VALUES ($1, $2)`, [`${round}-${i}`, JSON.stringify({ i })]);
          await c.query("COMMIT");
        } finally {
          c.release();
        }
      }),
    );
  }
  // round 0 warms both paths up
  const [paired, plain] = [claims.slice(1), inserts.slice(1)];
  bench("claim_events_per_s", median(paired), "events/s");
  bench("bare_insert_tx_per_s", median(plain), "tx/s");
  ratio("claim_vs_insert", median(paired.map((c, i) => c / plain[i]!)));
  await raw.end();
  await db.close();
}
