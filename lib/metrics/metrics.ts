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
  runOutcomes: counter(
    "atelier_run_outcomes_total",
    "Runs that reached their outcome, by outcome (merged, closed, no_pull_request, failed, canceled; docs/insights.md).",
    ["outcome"],
  ),
  triggerToStart: new Histogram({
    name: "atelier_run_trigger_to_start_seconds",
    help: "From a Run's trigger (its Event's reception) to its agent's start.",
    buckets: [1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600],
    registers,
  }),
  triggerToMerge: new Histogram({
    name: "atelier_run_trigger_to_merge_seconds",
    help: "From a Run's trigger (its Event's reception) to the merge of its pull request.",
    buckets: [60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600, 30 * 24 * 3600],
    registers,
  }),
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

/**
 * Runs that moved into `to` (counted when the write that moved them returned), and the outcome
 * a terminal state is (docs/insights.md): Failed, Canceled, and Succeeded without a pull request
 * (`pullRequest`); a pull request's merge or close is counted when a poll sees it.
 */
export function countRunTransition(to: string, runs = 1, pullRequest: number | null = null): void {
  if (runs <= 0) return;
  metrics.runTransitions.inc({ to }, runs);
  if (to === "Failed") countRunOutcome("failed", runs);
  else if (to === "Canceled") countRunOutcome("canceled", runs);
  else if (to === "Succeeded" && pullRequest === null) countRunOutcome("no_pull_request", runs);
}

/** A Run's outcome once it is reached (docs/insights.md): counted once per Run. */
export function countRunOutcome(outcome: "merged" | "closed" | "no_pull_request" | "failed" | "canceled", runs = 1): void {
  if (runs > 0) metrics.runOutcomes.inc({ outcome }, runs);
}
