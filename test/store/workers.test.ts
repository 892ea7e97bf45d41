import { afterAll, expect, it } from "vitest";
import { startWorkerHeartbeat, workerIdentity } from "../../lib/runner/worker-heartbeat";
import { heartbeatWorker, isWorkerAlive, listWorkers, liveWorkers } from "../../lib/store/runs/worker-registry";
import { testDb } from "../support/db";

const db = testDb(2);
afterAll(() => db.close());

it("a worker is alive while it heartbeats, and not once it stopped or fell silent for the stale window", () => {
  const now = new Date("2026-12-01T12:00:00Z");
  const at = (msAgo: number) => new Date(now.getTime() - msAgo);
  expect(isWorkerAlive({ heartbeatAt: at(29_000), stoppedAt: null }, 30_000, now)).toBe(true);
  expect(isWorkerAlive({ heartbeatAt: at(30_000), stoppedAt: null }, 30_000, now)).toBe(false);
  expect(isWorkerAlive({ heartbeatAt: at(0), stoppedAt: at(0) }, 30_000, now)).toBe(false);
});

it("registers, heartbeats with its running count, and is no longer live once stopped", async () => {
  const id = `test-host:${Math.floor(Math.random() * 1e9)}`;
  let running = 2;
  const beat = await startWorkerHeartbeat(db, workerIdentity(id, 4, "0.1.0"), () => running, { everyMs: 60_000 });
  expect((await liveWorkers(db, 30_000)).map((w) => w.id)).toContain(id);
  running = 3;
  await heartbeatWorker(db, id, running);
  const row = (await listWorkers(db)).find((w) => w.id === id);
  expect(row).toMatchObject({ slots: 4, running: 3, version: "0.1.0", pid: process.pid, stoppedAt: null });
  await beat.stop();
  expect((await liveWorkers(db, 30_000)).map((w) => w.id)).not.toContain(id);
  expect((await listWorkers(db)).find((w) => w.id === id)?.stoppedAt).not.toBeNull();
});
