// The three statements of a Run, one at a time on one connection: what each costs Postgres
// when nothing else waits on a lock or shares a commit, where the throughput benches (claim,
// engine) measure the whole path under load. In rounds (after a warm-up round), each phase runs
// CALLS times in turn: a bare one-row insert transaction (BEGIN, INSERT, COMMIT), then the
// store's own claims of CALLS Items (a fresh open each), claims of newer content of the same
// Items (each supersedes the unstarted Run and opens one: the claim bench's common claim), the
// same claims again (each finds its Run: nothing is written), and the start and outcome of the
// Runs open; of the engine bench's kind (an unregistered repository, its Items with no row)
// and of the product's (through the wiring's gate, on registered repositories with no quota,
// their Items stored as a poll stores them). Each figure is the median over the rounds of the
// Postgres CPU per call (read from /proc, all of Postgres's processes: a busy machine inflates
// it); the ratios compare a bare insert transaction, three times, with a Run's three
// statements (a fresh open, its start, its outcome).
import pg from "pg";
import { admission, admitAttempt } from "../../lib/metering/admission";
import { finishAttempt, startAttempt, type AttemptRef } from "../../lib/store/attempts";
import { createDb } from "../../lib/store/db";
import { recordAndClaim, type Admission } from "../../lib/store/record-and-claim";
import { basisOfOpened } from "../../lib/store/run-snapshot";
import { cpuNow } from "./cpu";
import { noopEvent } from "./engine";
import { bench, median, ratio } from "./measure";
import { registerRepositories, storeItems } from "./registered";

const CALLS = 1000;
const ROUNDS = 5;
/** Enough that no repository's default open rate (30 a minute) is reached: two opens per repository a round. */
const REPOSITORIES = 1024;

type Phase = "insert_tx" | "claim" | "supersede" | "recorded" | "start" | "outcome";

/** Postgres CPU (µs) per call of `op`, called CALLS times in turn. */
async function postgresPerCall(op: (i: number) => Promise<void>): Promise<number> {
  const before = cpuNow().postgres;
  for (let i = 0; i < CALLS; i++) await op(i);
  return ((cpuNow().postgres - before) * 1000) / CALLS;
}

export async function statementsBench(url: string): Promise<void> {
  const db = createDb(url, 1);
  const raw = new pg.Pool({ connectionString: url, max: 1 });
  await raw.query(`CREATE TABLE IF NOT EXISTS bench_statement_insert (id bigserial PRIMARY KEY, body jsonb, at timestamptz DEFAULT now())`);
  const productRepo = await registerRepositories(raw, 3, "statements", REPOSITORIES);
  await storeItems(raw, Array.from({ length: CALLS }, (_, i) => ({ repo: productRepo(i), number: i + 1 })));
  const paths: Record<"plain" | "product", { repoOf: (i: number) => string; gate?: Admission }> = {
    plain: { repoOf: (i) => `bench/statements-plain-${i % REPOSITORIES}` },
    product: { repoOf: productRepo, gate: admission() },
  };
  const usage = { durationMs: 0, tokensIn: null, tokensOut: null, costUsd: null, costEstimated: false };
  const tail = (at: Date) => [{ stream: "stdout", text: "noop", at }];

  const readings = { plain: new Map<Phase, number[]>(), product: new Map<Phase, number[]>() };
  const note = (path: keyof typeof readings, phase: Phase, value: number, counted: boolean) => {
    if (counted) readings[path].set(phase, [...(readings[path].get(phase) ?? []), value]);
  };
  for (let round = 0; round <= ROUNDS; round++) {
    const counted = round > 0;
    const insertTx = await postgresPerCall(async (i) => {
      const c = await raw.connect();
      try {
        await c.query("BEGIN");
        await c.query(`INSERT INTO bench_statement_insert (body) VALUES ($1)`, [JSON.stringify({ i })]);
        await c.query("COMMIT");
      } finally {
        c.release();
      }
    });
    for (const path of ["plain", "product"] as const) {
      note(path, "insert_tx", insertTx, counted);
      const { repoOf, gate } = paths[path];
      const tag = `${path}-${round}-${Date.now()}`;
      const opened: { runId: string; basis: Parameters<typeof startAttempt>[1] }[] = [];
      const attempts: AttemptRef[] = [];
      /** Claims Event `i` of `content`; it must open a Run in one statement (superseding the one before, if any). */
      const open = async (i: number, content: string) => {
        const claim = await recordAndClaim(db, noopEvent(content, i, repoOf), gate);
        if (claim.tag !== "Claimed" || !claim.openedRun) throw new Error(`bench: the claim of Event ${i} did not open in one statement: ${JSON.stringify(claim)}`);
        opened[i] = { runId: claim.runId, basis: basisOfOpened(claim.runId, new Date(), claim.openedRun) };
      };
      note(path, "claim", await postgresPerCall((i) => open(i, tag)), counted);
      note(path, "supersede", await postgresPerCall((i) => open(i, `${tag}-newer`)), counted);
      note(path, "recorded", await postgresPerCall(async (i) => {
        const claim = await recordAndClaim(db, noopEvent(`${tag}-newer`, i, repoOf), gate);
        if (claim.tag !== "Claimed" || claim.opened) throw new Error(`bench: a repeated Event ${i} was not found with its Run: ${JSON.stringify(claim)}`);
      }), counted);
      note(path, "start", await postgresPerCall(async (i) => {
        const begun = await startAttempt(db, opened[i]!.basis, { token: `bench/${i}`, workerId: "bench" }, admitAttempt);
        if (begun.tag !== "Started") throw new Error(`bench: the start of Run ${opened[i]!.runId} was ${begun.tag}`);
        attempts.push(begun.attempt);
      }), counted);
      note(path, "outcome", await postgresPerCall(async (i) => {
        await finishAttempt(db, attempts[i]!, { tag: "Succeeded", summary: "nothing to do", usage, branch: null, pullRequestNumber: null, headSha: null }, tail(new Date()));
      }), counted);
    }
  }
  await raw.end();
  await db.close();

  const of = (path: keyof typeof readings, phase: Phase) => median(readings[path].get(phase)!);
  bench("statement_insert_tx_postgres_us", of("plain", "insert_tx"), "us");
  for (const path of ["plain", "product"] as const) {
    const suffix = path === "plain" ? "" : "_metered";
    for (const phase of ["claim", "supersede", "recorded", "start", "outcome"] as const) bench(`statement_${phase}${suffix}_postgres_us`, of(path, phase), "us");
    const run = of(path, "claim") + of(path, "start") + of(path, "outcome");
    ratio(`run_statements${suffix}_vs_insert_tx`, (3 * of(path, "insert_tx")) / run);
  }
}
