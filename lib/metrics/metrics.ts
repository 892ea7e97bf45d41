import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * The Prometheus metrics of one process (web or worker), in one registry. Counters are kept as
 * the work happens — the places in lib/ that do it call `metrics.*` — so a scrape reads memory;
 * the only reads at scrape time are the cheap gauges a process wires in (lib/metrics/gauges.ts).
 * Labels are bounded: states, outcomes, categories, resources; an installation id where the
 * number of installations bounds it. Never a repository, an Item or a person. ADR 0014.
 */

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "atelier_process_" });

const registers = [registry];

export const metrics = {
  runTransitions: new Counter({
    name: "atelier_run_transitions_total",
    help: "Runs moved into a state (opened, started, finished, canceled), by the state they moved to.",
    labelNames: ["to"] as const,
    registers,
  }),
  attemptOutcomes: new Counter({
    name: "atelier_attempt_outcomes_total",
    help: "Attempts finished, by outcome (Succeeded, Failed) and failure category (none when it succeeded).",
    labelNames: ["outcome", "category"] as const,
    registers,
  }),
  attemptDuration: new Histogram({
    name: "atelier_attempt_duration_seconds",
    help: "How long an Attempt's agent ran, by outcome.",
    labelNames: ["outcome"] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600],
    registers,
  }),
  polls: new Counter({
    name: "atelier_polls_total",
    help: "Poll cycles of a repository, by outcome (polled, skipped, failed).",
    labelNames: ["outcome"] as const,
    registers,
  }),
  webhookDeliveries: new Counter({
    name: "atelier_webhook_deliveries_total",
    help: "Webhook deliveries received, by outcome (accepted, filtered, duplicate, invalid, refused, failed).",
    labelNames: ["outcome"] as const,
    registers,
  }),
  githubRateRemaining: new Gauge({
    name: "atelier_github_rate_limit_remaining",
    help: "What GitHub's last answer said of the caller's budget (x-ratelimit-remaining), by resource and caller (the App or an installation).",
    labelNames: ["resource", "caller"] as const,
    registers,
  }),
  leaseLosses: new Counter({
    name: "atelier_lease_losses_total",
    help: "Attempt leases lost while the Attempt ran, by reason (taken, expired).",
    labelNames: ["reason"] as const,
    registers,
  }),
  sandboxStarts: new Counter({
    name: "atelier_sandbox_starts_total",
    help: "Agent processes started, by how (sandboxed, unconfined).",
    labelNames: ["mode"] as const,
    registers,
  }),
  sandboxRefusals: new Counter({
    name: "atelier_sandbox_egress_refusals_total",
    help: "Connections an agent's sandbox asked for and its egress proxy refused.",
    registers,
  }),
  outboundDeliveries: new Counter({
    name: "atelier_outbound_deliveries_total",
    help: "Outbound webhook tries, by outcome (delivered, retry, failed).",
    labelNames: ["outcome"] as const,
    registers,
  }),
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
