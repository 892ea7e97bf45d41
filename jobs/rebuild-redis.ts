import type { MaintenanceDeps, MaintenanceWorker } from "./processors/maintenance";
import type { MirrorWorker } from "./processors/mirror";
import { maintain } from "./processors/maintenance";
import type { BullWorkQueue } from "./queues";
import { pollEverySoon } from "../lib/store/items/poll-schedule";

/**
 * Everything Redis held, rebuilt from Postgres (invariant 1), for the rebuild guard
 * (lib/runner/rebuild-guard.ts) once it finds Redis's data gone: the poll scheduler of every
 * polled repository, the scheduler of every schedule Loop, the installations' reconcile, the
 * maintenance schedulers (reconcile and orphan sweep) and the mirror's sweep, then one
 * maintenance pass, which gives every open Run its job again, and one mirror sweep, which
 * gives every Run whose check run or comment fell behind its sync again. Every repository is due at the next poll tick: a webhook
 * received while Redis was away may have lost its Hint. Each step is idempotent: several
 * workers may do it at once.
 */
export async function rebuildFromPostgres(parts: {
  workQueue: BullWorkQueue;
  maintenance: Pick<MaintenanceWorker, "reschedule">;
  mirror: Pick<MirrorWorker, "reschedule" | "sweep">;
  deps: MaintenanceDeps;
}): Promise<void> {
  await pollEverySoon(parts.deps.db, Date.now());
  await parts.workQueue.syncSchedulers();
  await parts.maintenance.reschedule();
  await parts.mirror.reschedule();
  await maintain(parts.deps);
  await parts.mirror.sweep();
}
