import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * The Prometheus metrics of one process (web or worker), in one registry. Counters are kept as
 * the work happens — the places in lib/ that do it call `metrics.*` — so a scrape reads memory;
 * the only reads at scrape time are the cheap gauges a process wires in (lib/health/gauges.ts).
 * Labels are bounded: states, outcomes, categories, resources; an installation id where the
 * number of installations bounds it. Never a repository, an Item or a person. ADR 0014.
 */

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "atelier_process_" });

const registers = [registry];

/** A counter in the registry; `labelNames` bound what it is counted by. */
const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) => new Counter<L>({ name, help, labelNames, registers });

export const metrics = {
  runTransitions: counter("atelier_run_transitions_total", "Runs moved into a state (opened, started, finished, canceled), by the state they moved to.", ["to"]),
  attemptOutcomes: counter("atelier_attempt_outcomes_total", "Attempts finished, by outcome (Succeeded, Failed) and failure category (none when it succeeded).", ["outcome", "category"]),
  attemptDuration: new Histogram({
    name: "atelier_attempt_duration_seconds",
    help: "How long an Attempt's agent ran, by outcome.",
    labelNames: ["outcome"] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600],
    registers,
  }),
  polls: counter("atelier_polls_total", "Poll cycles of a repository, by outcome (polled, skipped, failed).", ["outcome"]),
  webhookDeliveries: counter("atelier_webhook_deliveries_total", "Webhook deliveries received, by outcome (accepted, filtered, duplicate, invalid, refused, failed).", ["outcome"]),
  githubRateRemaining: new Gauge({
    name: "atelier_github_rate_limit_remaining",
    help: "What GitHub's last answer said of the caller's budget (x-ratelimit-remaining), by resource and caller (the App or an installation).",
    labelNames: ["resource", "caller"] as const,
    registers,
  }),
  leaseLosses: counter("atelier_lease_losses_total", "Attempt leases lost while the Attempt ran, by reason (taken, expired).", ["reason"]),
  sandboxStarts: counter("atelier_sandbox_starts_total", "Agent processes started, by how (sandboxed, unconfined).", ["mode"]),
  sandboxRefusals: counter("atelier_sandbox_egress_refusals_total", "Connections an agent's sandbox asked for and its egress proxy refused."),
  outboundDeliveries: counter("atelier_outbound_deliveries_total", "Outbound webhook tries, by outcome (delivered, retry, failed).", ["outcome"]),
  verifyRuns: counter("atelier_verify_runs_total", "Runs of a repository's verify on an Attempt's commit, by result (passed, failed, timed_out).", ["result"]),
};

/** The exposition text of the registry (what GET /metrics answers). */
export async function metricsText(): Promise<string> {
  return registry.metrics();
}

export const METRICS_CONTENT_TYPE = registry.contentType;

/** An Attempt's recorded outcome: its count by category, and how long it ran. */
export function countAttemptOutcome(outcome: "Succeeded" | "Failed", category: string | null, durationMs: number | null): void {
  metrics.attemptOutcomes.inc({ outcome, category: category ?? "none" });
  if (durationMs !== null && Number.isFinite(durationMs)) metrics.attemptDuration.observe({ outcome }, Math.max(0, durationMs) / 1000);
}

/** Runs that moved into `to` (counted when the write that moved them returned). */
export function countRunTransition(to: string, runs = 1): void {
  if (runs > 0) metrics.runTransitions.inc({ to }, runs);
}
