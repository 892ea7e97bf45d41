import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { WORKER_DIED_ERROR } from "../../lib/runner/engine-failure";
import { ENGINE_FAILURES_BEFORE_PARKING } from "../../lib/store/runs/engine-failures";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { startSimWorld, type SimWorld } from "./support/sim-world";
import { attemptsOf, issueEvent, openRun, REDIS_URL, uniquePrefix, waitFor } from "./support/runner-fixture";
import { killChildren, spawnWorkerChild, type WorkerChild } from "./support/worker-child";

/**
 * A Run whose job kills its worker every time, before any Attempt begins: here the worker is
 * killed with SIGKILL (a real child process) while its move of the Run waits inside Postgres
 * (a trigger on the Run's first Attempt sleeps), once per worker, again and again. Each
 * abandoned job counts one engine failure; at N the Run is parked (Waiting, `engine_failed`)
 * with the worker's death as its error, and nothing moves it again.
 */

let pdb: PrivateDb;
const prefix = uniquePrefix("crashing");
const TTL = 2_000;
let world: SimWorld;
const children: ChildProcess[] = [];
const roots: string[] = [];

beforeAll(async () => {
  pdb = await createPrivateDb("crashing");
  // a backend whose client died stops at once, even while it sleeps in the trigger
  const dbName = new URL(pdb.url).pathname.slice(1);
  await pdb.db.pool.query(`ALTER DATABASE "${dbName}" SET client_connection_check_interval = '500ms'`);
  world = await startSimWorld(pdb.db);
}, 60_000);
afterEach(() => killChildren(children));
afterAll(async () => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
  await world?.close();
  await pdb?.drop();
});

async function spawnWorker(workerId: string): Promise<WorkerChild> {
  const root = mkdtempSync(join(tmpdir(), "atelier-crashing-ws-"));
  roots.push(root);
  const worker = await spawnWorkerChild({ workerId, dbUrl: pdb.url, prefix, world, workspaceRoot: root, leaseTtlMs: TTL });
  children.push(worker.child);
  return worker;
}

/** Backends of this database sleeping in the trigger: a worker's move of the Run, waiting. */
const sleepingMoves = async () =>
  Number(
    (await pdb.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep' AND pid <> pg_backend_pid()`)).rows[0]!.n,
  );

const runRow = async (runId: string) =>
  (await pdb.db.pool.query<{ state: string; waiting_reason: string | null; engine_failures: number; engine_error: string | null }>(
    `SELECT state, waiting_reason, engine_failures, engine_error FROM runs WHERE id = $1`,
    [runId],
  )).rows[0]!;

describe("a Run whose job crashes its worker every time", () => {
  it(`is counted at each death and parked after ${ENGINE_FAILURES_BEFORE_PARKING}, not moved forever`, async () => {
    const repo = await world.addRepo("crashing");
    const run = await openRun(pdb.db, issueEvent(repo, 81, "h1", "Crash the worker"));
    await pdb.db.pool.query(`CREATE FUNCTION sleep_in_attempt() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(600); RETURN NEW; END $$`);
    await pdb.db.pool.query(`CREATE TRIGGER sleep_in_attempt BEFORE INSERT ON attempts FOR EACH ROW WHEN (NEW.run_id = '${run.runId}') EXECUTE FUNCTION sleep_in_attempt()`);
    const queue = new BullWorkQueue({ connection: bullConnection(REDIS_URL), prefix, db: pdb.db, pollIntervalSeconds: 60 });
    try {
      await queue.moveRun(run.runId, { receivedAt: run.receivedAt });
      for (let death = 1; death <= ENGINE_FAILURES_BEFORE_PARKING; death++) {
        const worker = await spawnWorker(`crash-${death}`);
        await waitFor(`worker ${death} to hold the Run's job, inside Postgres`, async () => (await sleepingMoves()) > 0 || null, 90_000, 200);
        // the worker found the abandoned job and counted it before it moved the Run: the count
        // is written while the move sleeps, not behind it (a count waiting on the move's lock
        // of the Run died with the worker, and the Run was never parked)
        expect((await runRow(run.runId)).engine_failures).toBe(death - 1);
        worker.child.kill("SIGKILL");
        await worker.exited;
        await waitFor("its backend to end", async () => (await sleepingMoves()) === 0 || null, 30_000, 200);
      }
      await spawnWorker("finder");
      const parked = await waitFor("the Run to be parked", async () => {
        const row = await runRow(run.runId);
        return row.state === "Waiting" ? row : null;
      }, 60_000, 200);
      expect(parked).toMatchObject({ waiting_reason: "engine_failed", engine_failures: ENGINE_FAILURES_BEFORE_PARKING, engine_error: WORKER_DIED_ERROR });
      expect(await attemptsOf(pdb.db, run.runId)).toEqual([]);
      // parked, its job moves it no more: no worker sleeps in its move
      await new Promise((r) => setTimeout(r, 3 * TTL));
      expect(await sleepingMoves()).toBe(0);
      expect((await runRow(run.runId)).engine_failures).toBe(ENGINE_FAILURES_BEFORE_PARKING);
    } finally {
      await pdb.db.pool.query(`DROP TRIGGER IF EXISTS sleep_in_attempt ON attempts`);
      await queue.queue("attempts").obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
  }, 420_000);
});
