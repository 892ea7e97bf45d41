import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getWorkers, NO_WORKER_WARNING, noLiveWorkerWarning } from "../../lib/dashboard/workers";
import { WORKER_STALE_AFTER_MS } from "../../lib/runner/worker-heartbeat";
import { heartbeatWorker, markWorkerStopped, registerWorker } from "../../lib/store/runs/worker-registry";
import { createPrivateDb, type PrivateDb } from "../support/private-db";

// The Workers page's data and the banner, on a database of this file's own (the registry is
// global: the shared database holds the other files' workers).

let pdb: PrivateDb;

beforeAll(async () => {
  pdb = await createPrivateDb("workers_view");
});
afterAll(async () => {
  await pdb?.drop();
});

const identity = (id: string, slots = 2) => ({ id, host: `host-${id}`, pid: 100, version: "1.2.3", slots });

describe("the Workers page and the no-worker banner", () => {
  it("warns while no worker is alive, and not once one heartbeats", async () => {
    expect(await noLiveWorkerWarning(pdb.db)).toBe(NO_WORKER_WARNING);
    await registerWorker(pdb.db, identity("w-alive", 4));
    await heartbeatWorker(pdb.db, "w-alive", 3);
    expect(await noLiveWorkerWarning(pdb.db)).toBeNull();
  });

  it("lists the live workers first with their load; a stopped or silent one is not alive and runs nothing", async () => {
    await registerWorker(pdb.db, identity("w-stopped"));
    await markWorkerStopped(pdb.db, "w-stopped");
    await registerWorker(pdb.db, identity("w-silent", 3));
    await heartbeatWorker(pdb.db, "w-silent", 2);
    await pdb.db.pool.query(`UPDATE workers SET heartbeat_at = now() - make_interval(secs => $1::float8 / 1000 * 2) WHERE id = 'w-silent'`, [WORKER_STALE_AFTER_MS]);
    const { workers, live } = await getWorkers(pdb.db, { admin: true });
    expect(live).toBe(1);
    expect(workers[0]).toMatchObject({ id: "w-alive", host: "host-w-alive", alive: true, running: 3, slots: 4, version: "1.2.3", stoppedAt: null });
    expect(workers.slice(1).map((w) => [w.id, w.alive, w.running, w.stoppedAt === null])).toEqual(
      expect.arrayContaining([
        ["w-stopped", false, 0, false],
        ["w-silent", false, 0, true],
      ]),
    );
  });

  it("shows where workers run, their pids and versions to instance admins only (attack 33)", async () => {
    const { workers, live } = await getWorkers(pdb.db, { admin: false });
    expect(live).toBe(1);
    expect(workers[0]).toMatchObject({ id: "worker 1", host: null, pid: null, version: null, alive: true, running: 3, slots: 4 });
    expect(JSON.stringify(workers)).not.toMatch(/host-w-|w-alive|w-stopped|1\.2\.3/);
  });

  it("says nothing (rather than failing the page) when the registry cannot be read", async () => {
    const { createDb } = await import("../../lib/store/kernel/db");
    const away = createDb("postgresql://postgres@127.0.0.1:1/none", 1);
    try {
      expect(await noLiveWorkerWarning(away)).toBeNull();
    } finally {
      await away.close();
    }
  });
});
