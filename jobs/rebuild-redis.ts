import type { MaintenanceDeps, MaintenanceWorker } from "./processors/maintenance";
import { maintain } from "./processors/maintenance";
import type { BullWorkQueue } from "./queues";
import { pollEverySoon } from "../lib/store/poll-schedule";

/**
 * Everything Redis held, rebuilt from Postgres (invariant 1), for the rebuild guard
 * (lib/runner/rebuild-guard.ts) once it finds Redis's data gone: the poll scheduler of every
 * polled repository, the scheduler of every schedule Loop, the installations' reconcile, the
 * maintenance schedulers (reconcile and orphan sweep), then one maintenance pass, which gives
 * every open Run its job again. Every repository is due at the next poll tick: a webhook
 * received while Redis was away may have lost its Hint. Each step is idempotent: several
 * workers may do it at once.
 */
export async function rebuildFromPostgres(parts: { workQueue: BullWorkQueue; maintenance: Pick<MaintenanceWorker, "reschedule">; deps: MaintenanceDeps }): Promise<void> {
  await pollEverySoon(parts.deps.db, Date.now());
  await parts.workQueue.syncSchedulers();
  await parts.maintenance.reschedule();
  await maintain(parts.deps);
}
