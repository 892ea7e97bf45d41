// recordAndClaim Events/s against a bare one-row-insert transaction, same database, same
// concurrency (8 submitters), measured in rounds (a claim round, a metered claim round, then an
// insert round) after one warm-up round of each: a ratio is the median of the rounds' own
// ratios, so a busy moment weighs on both sides of one round instead of on one side of a
// best-of comparison. The claim is the engine's own, of a repository no installation
// registered (nothing is metered) and its Items have no row; the metered claim is the
// product's: through the admission gate the wiring gives every process, on 400 repositories of
// one installation that set no quota (each open charges the month's counters and takes a token
// of its repository's default open rate, which 400 repositories do not exhaust in one run), on
// Items stored beforehand as a poll stores them (each claim keeps its Item's current Run).
import pg from "pg";
import { itemEventKey, itemKey } from "../../lib/engine/ids";
import { admission } from "../../lib/metering/admission";
import { createDb, type Db } from "../../lib/store/db";
import { recordAndClaim, type Admission, type EventInput } from "../../lib/store/record-and-claim";
import { bench, median, ratio, throughput } from "./measure";
import { registerRepositories, storeItems } from "./registered";

const CONCURRENCY = 8;
const PER_ROUND = 1500;
export const ROUNDS = 5;
const ITEMS = 400;

function event(round: number, i: number, repoOf: (n: number) => string = () => "bench/claim"): EventInput {
  // mostly new content on 400 Items; every 10th observation repeats an earlier one
  const n = (i % ITEMS) + 1;
  const hash = i % 10 === 9 ? `r${round}-${i - 9}` : `r${round}-${i}`;
  const repo = repoOf(n);
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

/** One round of metered claims; every one must open or find its Run (a refusal would measure the gate's refusal instead). */
const meteredRound = (db: Db, gate: Admission, repoOf: (n: number) => string, round: number): Promise<number> =>
  throughput(PER_ROUND, CONCURRENCY, async (i) => {
    const claim = await recordAndClaim(db, event(round, i, repoOf), gate);
    if (claim.tag !== "Claimed") throw new Error(`bench: a metered claim was not claimed: ${JSON.stringify(claim)}`);
  });

export async function claimBench(url: string): Promise<void> {
  // the product's default pool (10): 8 submitters, and room for the Run-change announcer
  const db = createDb(url);
  const raw = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  await raw.query(`CREATE TABLE IF NOT EXISTS bench_insert (id text PRIMARY KEY, body jsonb, at timestamptz DEFAULT now())`);
  const meteredRepo = await registerRepositories(raw, 1, "claim-metered", ITEMS);
  await storeItems(raw, Array.from({ length: ITEMS }, (_, i) => ({ repo: meteredRepo(i + 1), number: i + 1 })));
  const gate = admission();
  const claims: number[] = [];
  const metered: number[] = [];
  const inserts: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    claims.push(await claimRound(db, round));
    metered.push(await meteredRound(db, gate, meteredRepo, round));
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
  const [paired, gated, plain] = [claims.slice(1), metered.slice(1), inserts.slice(1)];
  bench("claim_events_per_s", median(paired), "events/s");
  bench("claim_metered_events_per_s", median(gated), "events/s");
  bench("bare_insert_tx_per_s", median(plain), "tx/s");
  ratio("claim_vs_insert", median(paired.map((c, i) => c / plain[i]!)));
  ratio("claim_metered_vs_insert", median(gated.map((c, i) => c / plain[i]!)));
  await raw.end();
  await db.close();
}
