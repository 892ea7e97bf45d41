import { Gauge } from "prom-client";
import { RUN_STATES } from "../engine/run-state";
import type { Db } from "../store/kernel/db";
import { countRunsByState, pollLagByInstallation, type RunStateCount } from "../store/reads/gauge-reads";
import { registry } from "../metrics/metrics";

/**
 * The gauges read at scrape time, because a count kept in one process cannot know the others':
 * Runs by state, the queued Runs (the queue of Attempts waiting for a slot) and the age of the
 * oldest one — one grouped statement over `runs` (BENCH metrics_scrape_ms at 10,000 Runs) —,
 * and each installation's poll lag: how long ago its stalest repository was last polled (one
 * grouped statement over `repositories`). When the database is away the gauges are left out
 * and the scrape still answers with the counters.
 */

let source: Db | null = null;

let pending: Promise<RunStateCount[] | null> | null = null;

/** One read per scrape, shared by the gauges that need it. */
function readStates(): Promise<RunStateCount[] | null> {
  if (!source) return Promise.resolve(null);
  const db = source;
  pending ??= countRunsByState(db)
    .catch(() => null)
    .finally(() => {
      pending = null;
    });
  return pending;
}

const registers = [registry];

new Gauge({
  name: "atelier_runs",
  help: "Runs in each state, as Postgres holds them now.",
  labelNames: ["state"] as const,
  registers,
  async collect() {
    const rows = await readStates();
    this.reset();
    if (!rows) return;
    for (const state of RUN_STATES) this.set({ state }, rows.find((r) => r.state === state)?.n ?? 0);
  },
});

new Gauge({
  name: "atelier_queue_depth",
  help: "Runs queued for an Attempt (waiting for a worker's slot).",
  registers,
  async collect() {
    const rows = await readStates();
    this.reset();
    if (rows) this.set(rows.find((r) => r.state === "Queued")?.n ?? 0);
  },
});

new Gauge({
  name: "atelier_queue_oldest_seconds",
  help: "Age of the oldest queued Run (0 when none waits).",
  registers,
  async collect() {
    const rows = await readStates();
    this.reset();
    if (!rows) return;
    const oldest = rows.find((r) => r.state === "Queued")?.oldest;
    this.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
  },
});

new Gauge({
  name: "atelier_poll_lag_seconds",
  help: "Per installation, seconds since its least recently polled repository was polled (or registered).",
  labelNames: ["installation_id"] as const,
  registers,
  async collect() {
    this.reset();
    if (!source) return;
    const rows = await pollLagByInstallation(source).catch(() => []);
    for (const r of rows) this.set({ installation_id: String(r.installation_id) }, Math.max(0, r.lag));
  },
});

/** The database the scrape-time gauges read (each process sets its own once). */
export function readGaugesFrom(db: Db | null): void {
  source = db;
}
