import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_BOARD_LANES } from "../../lib/config/roster";
import { loadBoard } from "../../lib/dashboard/board";
import { loadRunDetail } from "../../lib/dashboard/run-detail";
import { heartbeatWorker, markWorkerStopped, registerWorker } from "../../lib/store/runs/worker-registry";
import { createPrivateDb, type PrivateDb } from "../support/private-db";
import { seedItem, seedRepo, seedRun, uniqueInstallationId } from "./support/seed";

/** A Queued Run says "no worker is running" while the registry knows no live worker (a database of its own: the registry is global). */

const REPO = "noworker/app";
let pdb: PrivateDb;

beforeAll(async () => {
  pdb = await createPrivateDb("noworker");
  await seedRepo(pdb.db, REPO, uniqueInstallationId());
  await seedItem(pdb.db, REPO, 1, { labels: [], state: "open", updatedAt: new Date() });
});
afterAll(() => pdb?.drop());

const saysOnBoard = async () => (await loadBoard(pdb.db, { repos: [REPO], lanes: DEFAULT_BOARD_LANES })).lanes.flatMap((l) => l.cards).find((c) => c.number === 1)?.run?.waitsFor;

it("a Queued Run waits for a free slot while a worker heartbeats, and says no worker is running once none does", async () => {
  const runId = await seedRun(pdb.db, { repo: REPO, number: 1, state: "Queued" });
  // nobody ever registered
  expect((await loadRunDetail(pdb.db, runId)).waitsFor).toBe("a worker, and no worker is running");
  expect(await saysOnBoard()).toBe("a worker, and no worker is running");

  await registerWorker(pdb.db, { id: "w1", host: "h", pid: 1, version: "t", slots: 2 });
  await heartbeatWorker(pdb.db, "w1", 0);
  expect((await loadRunDetail(pdb.db, runId)).waitsFor).toBe("a free worker slot");
  expect(await saysOnBoard()).toBe("a free worker slot");

  // a heartbeat older than the stale window counts for nothing
  await pdb.db.pool.query(`UPDATE workers SET heartbeat_at = now() - interval '10 minutes' WHERE id = 'w1'`);
  expect((await loadRunDetail(pdb.db, runId)).waitsFor).toBe("a worker, and no worker is running");
  await heartbeatWorker(pdb.db, "w1", 0);
  await markWorkerStopped(pdb.db, "w1");
  expect(await saysOnBoard()).toBe("a worker, and no worker is running");
});
