import { metrics } from "../metrics/metrics";
import { systemClock, sleep, type Clock } from "./clock";
import { GitHubRateLimitedError } from "./rate-limit-errors";
import { numberHeader, rateLimitRefusal, SECONDARY_BACKOFF_MS } from "./rate-limit-refusal";

export type RateResource = "core" | "graphql";

type Headers = Record<string, string | number | undefined>;
const MAX_SECONDARY_BACKOFF_MS = 30 * 60_000;

interface Budget {
  limit: number | null;
  remaining: number | null;
  resetAt: number | null;
  /** Nothing may be sent before this instant (epoch ms). */
  blockedUntil: number;
  /** The latest block handed to the other processes. */
  sharedUntil: number;
}

/**
 * Blocks learned by one process, seen by every process of the instance (Redis): GitHub counts
 * an installation's requests across all of Atelier's workers, so when one is told to wait,
 * the others wait too instead of each finding out by being refused.
 */
export interface SharedRateBlocks {
  /** Until when (epoch ms) the caller may not call the resource; 0 when it may. */
  blockedUntil(caller: string, resource: RateResource): Promise<number>;
  /** Records a block; a later block is kept over an earlier one. */
  block(caller: string, resource: RateResource, until: number): Promise<void>;
}

/**
 * What GitHub said about each caller's rate limits, and the gate every request passes: a
 * caller whose budget is exhausted (x-ratelimit-remaining 0 until x-ratelimit-reset) or that
 * was told to back off (Retry-After) waits a short while, or is refused with
 * GitHubRateLimitedError when the wait is long; it never hammers. With `shared`, a block any
 * process of the instance learned holds here too. `nextAllowedAt` lets a scheduler delay the
 * next poll instead.
 */
export class RateLimits {
  private readonly budgets = new Map<string, Budget>();
  /** Secondary limits without `retry-after` met in a row, per caller. */
  private readonly secondaryStrikes = new Map<string, number>();

  constructor(
    private readonly clock: Clock = systemClock,
    /** Waits up to this long inside a request; longer waits throw. */
    private readonly maxWaitMs = 2_000,
    private readonly shared?: SharedRateBlocks,
  ) {}

  /** When the caller may next call this resource; null when it may now. */
  nextAllowedAt(caller: string, resource: RateResource = "core"): Date | null {
    const blocked = this.budget(caller, resource).blockedUntil;
    return blocked > this.clock.now() ? new Date(blocked) : null;
  }

  /** What the last response said: limit, remaining, reset. */
  snapshot(caller: string, resource: RateResource = "core"): Readonly<Budget> {
    return { ...this.budget(caller, resource) };
  }

  /** Waits until the caller may send, or throws when that is too far away. */
  async admit(caller: string, resource: RateResource): Promise<void> {
    if (this.shared) {
      const until = await this.shared.blockedUntil(caller, resource).catch(() => 0); // Redis away: what this process knows
      const budget = this.budget(caller, resource);
      budget.blockedUntil = Math.max(budget.blockedUntil, until);
      budget.sharedUntil = Math.max(budget.sharedUntil, until);
    }
    const next = this.nextAllowedAt(caller, resource);
    if (!next) return;
    const wait = next.getTime() - this.clock.now();
    if (wait > this.maxWaitMs) throw new GitHubRateLimitedError(next, resource, this.clock.now());
    await sleep(wait);
  }

  /**
   * Reads a response's rate-limit headers. Returns the error to throw when the response is a
   * rate-limit refusal (see rateLimitRefusal), else null. A secondary limit without
   * `retry-after` blocks the caller for a minute, then twice as long each time it comes back
   * before a request went through.
   */
  observe(caller: string, resource: RateResource, status: number, headers: Headers, message = ""): GitHubRateLimitedError | null {
    const now = this.clock.now();
    const actual = headerResource(headers) ?? resource;
    const budget = this.budget(caller, actual);
    const remaining = numberHeader(headers, "x-ratelimit-remaining");
    const reset = numberHeader(headers, "x-ratelimit-reset");
    const limit = numberHeader(headers, "x-ratelimit-limit");
    if (limit !== null) budget.limit = limit;
    if (remaining !== null) {
      budget.remaining = remaining;
      metrics.githubRateRemaining.set({ resource: actual, caller }, remaining);
    }
    if (reset !== null) budget.resetAt = reset * 1000;
    if (remaining === 0 && reset !== null) budget.blockedUntil = Math.max(budget.blockedUntil, reset * 1000);
    const refusal = rateLimitRefusal(status, headers, message);
    if (refusal?.kind === "secondary") {
      const wait = refusal.retryAfterMs ?? this.secondaryBackoffMs(caller);
      // a secondary limit holds for every resource of the caller
      for (const r of ["core", "graphql"] as const) {
        const b = this.budget(caller, r);
        b.blockedUntil = Math.max(b.blockedUntil, now + wait);
      }
    } else if (refusal?.kind === "primary" && refusal.resetAt === null) {
      budget.blockedUntil = Math.max(budget.blockedUntil, now + SECONDARY_BACKOFF_MS);
    } else if (!refusal && status < 400) {
      this.secondaryStrikes.delete(caller);
    }
    this.share(caller, now);
    if (!refusal) return null;
    const until = this.budget(caller, actual).blockedUntil;
    return new GitHubRateLimitedError(new Date(Math.max(until, now + 1000)), actual, now);
  }

  /** A minute for the first secondary limit without `retry-after`, doubling up to half an hour. */
  private secondaryBackoffMs(caller: string): number {
    const strikes = (this.secondaryStrikes.get(caller) ?? 0) + 1;
    this.secondaryStrikes.set(caller, strikes);
    return Math.min(MAX_SECONDARY_BACKOFF_MS, SECONDARY_BACKOFF_MS * 2 ** (strikes - 1));
  }

  /** GraphQL's `rateLimit { remaining resetAt }`, read from a query's answer. */
  observeGraphqlBudget(caller: string, rateLimit: { remaining?: number; resetAt?: string; limit?: number } | null | undefined): void {
    if (!rateLimit || typeof rateLimit.remaining !== "number") return;
    const budget = this.budget(caller, "graphql");
    budget.remaining = rateLimit.remaining;
    metrics.githubRateRemaining.set({ resource: "graphql", caller }, rateLimit.remaining);
    if (typeof rateLimit.limit === "number") budget.limit = rateLimit.limit;
    const resetAt = rateLimit.resetAt ? Date.parse(rateLimit.resetAt) : NaN;
    if (!Number.isNaN(resetAt)) {
      budget.resetAt = resetAt;
      if (rateLimit.remaining <= 0) budget.blockedUntil = Math.max(budget.blockedUntil, resetAt);
    }
    this.share(caller, this.clock.now());
  }

  /** Hands the caller's blocks still ahead of `now` to the other processes (best effort). */
  private share(caller: string, now: number): void {
    if (!this.shared) return;
    for (const resource of ["core", "graphql"] as const) {
      const budget = this.budget(caller, resource);
      if (budget.blockedUntil <= Math.max(now, budget.sharedUntil)) continue;
      budget.sharedUntil = budget.blockedUntil;
      void this.shared.block(caller, resource, budget.blockedUntil).catch(() => undefined);
    }
  }

  private budget(caller: string, resource: RateResource): Budget {
    const key = `${caller}:${resource}`;
    let budget = this.budgets.get(key);
    if (!budget) {
      budget = { limit: null, remaining: null, resetAt: null, blockedUntil: 0, sharedUntil: 0 };
      this.budgets.set(key, budget);
    }
    return budget;
  }
}

function headerResource(headers: Headers): RateResource | null {
  const value = headers["x-ratelimit-resource"];
  return value === "graphql" ? "graphql" : value === "core" ? "core" : null;
}

/** The caller key of an installation (the same words the simulator's counters use). */
export const installationCaller = (installationId: number): string => `installation:${installationId}`;
