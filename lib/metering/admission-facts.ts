import {
  countRunning,
  lockConcurrency,
  lockMonthlyRuns,
  readAdmissionTarget,
  readMonthUsage,
  readRateBuckets,
  type FactsMode,
} from "../store/metering/admission-rows";
import type { Queryable } from "../store/kernel/sql";
import type { AdmissionFacts, Phase, ScopeFacts } from "./gate";
import { lowerByReserve, type Limits } from "./limits";
import { monthKey, resetAt } from "./month";
import { refill } from "./rate-bucket";
import { installationScope, repoScope } from "./scopes";

/**
 * Reads what the admission gate decides on, for one repository (and the Run asking, when an
 * Attempt starts), in one of the store's two modes (FactsMode, lib/store/metering/admission-rows.ts):
 * "lock" inside the transaction that will act on the answer, "peek" for a read-only look.
 */

export interface AdmissionTarget {
  /** owner/name */
  repo: string;
  /** The Run asking to start an Attempt; it does not count against its own concurrency. */
  runId?: string | null;
  /** Slots held back from every set concurrency cap for other workloads (the instance's concurrency_reserve). */
  concurrencyReserve?: number;
}

export interface LoadedFacts {
  facts: AdmissionFacts;
  month: string;
  scopes: { installation: string; repository: string };
  /** The rate buckets asked, with the tokens available now: an admitted open takes one from each. */
  buckets: { scope: string; available: number }[];
}

/** Null when the repository is not registered: no limits are known for it, and nothing refuses. */
export async function loadAdmissionFacts(
  sql: Queryable,
  target: AdmissionTarget,
  phases: readonly Phase[],
  mode: FactsMode,
): Promise<LoadedFacts | null> {
  const repo = target.repo.toLowerCase();
  const t = await readAdmissionTarget(sql, repo);
  if (!t) return null;
  const month = monthKey(t.now);
  const scopes = { installation: installationScope(t.installation_id), repository: repoScope(repo) };
  const limits = (p: "i" | "r"): Limits => ({
    monthlyRuns: t[`${p}_runs`],
    monthlyCostUsd: t[`${p}_cost`],
    maxConcurrent: lowerByReserve(t[`${p}_conc`], target.concurrencyReserve ?? 0),
    openRatePerMinute: t[`${p}_rate`],
  });
  const installation: ScopeFacts = {
    kind: "installation",
    name: t.account_login,
    limits: limits("i"),
    runsThisMonth: 0,
    costThisMonth: 0,
    running: 0,
    rateTokens: null,
  };
  const repository: ScopeFacts = { ...installation, kind: "repository", name: repo, limits: limits("r") };
  const both = [installation, repository] as const;
  const scopeOf = (s: ScopeFacts) => (s.kind === "installation" ? scopes.installation : scopes.repository);

  // only an open increments the counters: only an open locks them (an Attempt's start reads the
  // cost). The installation's month, the sum of its repositories' counters, is read only where
  // one of its monthly limits asks it, and its opens are serialized only by its Run quota.
  const counterMode = mode === "lock" && phases.includes("open") ? "lock" : "peek";
  const capped = installation.limits.monthlyRuns > 0 || installation.limits.monthlyCostUsd > 0;
  if (counterMode === "lock" && installation.limits.monthlyRuns > 0) await lockMonthlyRuns(sql, t.installation_id);
  const usage = await readMonthUsage(sql, { scope: scopes.repository, month, mode: counterMode, installationId: capped ? t.installation_id : null });
  repository.runsThisMonth = usage.repository.runs;
  repository.costThisMonth = usage.repository.cost;
  installation.runsThisMonth = usage.installation?.runs ?? 0;
  installation.costThisMonth = usage.installation?.cost ?? 0;

  if (phases.includes("attempt") && both.some((s) => s.limits.maxConcurrent > 0)) {
    if (mode === "lock") await lockConcurrency(sql, t.installation_id);
    const running = await countRunning(sql, t.installation_id, repo, target.runId ?? null);
    installation.running = running.inst;
    repository.running = running.repo;
  }

  const buckets: LoadedFacts["buckets"] = [];
  const limited = both.filter((s) => s.limits.openRatePerMinute > 0);
  if (phases.includes("open") && limited.length) {
    const state = await readRateBuckets(sql, limited.map((s) => ({ scope: scopeOf(s), perMinute: s.limits.openRatePerMinute })), mode);
    for (const s of limited) {
      const b = state.get(scopeOf(s));
      const perMinute = s.limits.openRatePerMinute;
      s.rateTokens = b ? refill(Math.min(b.tokens, perMinute), b.elapsed, perMinute) : perMinute;
      buckets.push({ scope: scopeOf(s), available: s.rateTokens });
    }
  }

  return {
    facts: { now: t.now, resetAt: resetAt(t.now), installationId: t.installation_id, suspendedAt: t.suspended_at, installation, repository },
    month,
    scopes,
    buckets,
  };
}
