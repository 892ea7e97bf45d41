import { metrics } from "../metrics/metrics";
import { systemClock, sleep, type Clock } from "./clock";
import { GitHubRateLimitedError } from "./errors";

export type RateResource = "core" | "graphql";

type Headers = Record<string, string | number | undefined>;

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
   * rate-limit refusal (403/429 with remaining 0, or with Retry-After), else null.
   */
  observe(caller: string, resource: RateResource, status: number, headers: Headers): GitHubRateLimitedError | null {
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
    const retryAfter = numberHeader(headers, "retry-after");
    const refused = status === 403 || status === 429;
    if (refused && retryAfter !== null) {
      // a secondary limit holds for every resource of the caller
      for (const r of ["core", "graphql"] as const) {
        const b = this.budget(caller, r);
        b.blockedUntil = Math.max(b.blockedUntil, now + retryAfter * 1000);
      }
    } else if (refused && remaining === 0 && reset === null) {
      budget.blockedUntil = Math.max(budget.blockedUntil, now + 60_000);
    }
    this.share(caller, now);
    if (!refused || (remaining !== 0 && retryAfter === null)) return null;
    const until = this.budget(caller, actual).blockedUntil;
    return new GitHubRateLimitedError(new Date(Math.max(until, now + 1000)), actual, now);
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

function numberHeader(headers: Headers, name: string): number | null {
  const value = headers[name];
  if (value === undefined || value === "") return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

function headerResource(headers: Headers): RateResource | null {
  const value = headers["x-ratelimit-resource"];
  return value === "graphql" ? "graphql" : value === "core" ? "core" : null;
}

/** The caller key of an installation (the same words the simulator's counters use). */
export const installationCaller = (installationId: number): string => `installation:${installationId}`;
