import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { instanceConfig } from "../../lib/auth/instance-config";
import { createLog } from "../../lib/github/log";
import { createWiring, type Wiring } from "../../lib/instance/wiring";
import type { Db } from "../../lib/store/kernel/db";
import { db } from "./db";

export interface WebWiringOptions {
  /** BullMQ key prefix (default the instance's; tests use their own). */
  bullPrefix?: string;
  /** The runner's Redis key prefix (default the instance's, ATELIER_REDIS_PREFIX). */
  keyPrefix?: string;
}

/**
 * The web process's parts (lib/instance/wiring.ts), as the web process knows them: BullMQ and
 * Redis that fail fast (a request is answered 503 rather than kept waiting), the instance
 * config re-read every 30 s.
 */
export function createWebWiring(database: Db, options: WebWiringOptions = {}): Wiring<BullWorkQueue> {
  return createWiring({
    db: database,
    log: createLog("atelier.web"),
    roster: instanceConfig,
    failFast: true,
    ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
    workQueue: ({ db: on, roster }) =>
      new BullWorkQueue({
        connection: bullConnection(undefined, { failFast: true }),
        db: on,
        pollIntervalSeconds: roster.pollIntervalSeconds,
        ...(options.bullPrefix ? { prefix: options.bullPrefix } : {}),
      }),
  });
}

// Next.js bundles the instrumentation hook and each route apart, each with its own copy of this
// module: the process's one wiring lives on globalThis, so the dashboard's services and the
// webhook route share one App, one Redis and one queue.
const SLOT = Symbol.for("atelier.webWiring");
type Slot = { [SLOT]?: Wiring<BullWorkQueue> };

/** The web process's wiring, built on first use (it connects nothing until asked). */
export function webWiring(): Wiring<BullWorkQueue> {
  const slot = globalThis as Slot;
  return (slot[SLOT] ??= createWebWiring(db()));
}
