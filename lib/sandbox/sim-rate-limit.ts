import { HOUR_MS, type SimClock } from "./sim-clock";

export type RateResource = "core" | "graphql";

export interface RateBucket {
  resource: RateResource;
  limit: number;
  used: number;
  /** Epoch ms when the window ends. */
  resetAt: number;
}

/**
 * GitHub's primary rate limit, really counted: one bucket per caller (installation, user,
 * app, anonymous) and resource, 5,000 an hour (60 for anonymous callers), the window starting
 * at the first request.
 */
export class RateLimits {
  private readonly buckets = new Map<string, RateBucket>();
  private limits: Record<string, number> = {};

  constructor(private readonly clock: SimClock) {}

  /** Overrides the hourly limit of one caller key (e.g. "installation:12"), for tests. */
  setLimit(callerKey: string, limit: number): void {
    this.limits[callerKey] = limit;
    for (const resource of ["core", "graphql"] as const) {
      const bucket = this.buckets.get(`${callerKey}:${resource}`);
      if (bucket) bucket.limit = limit;
    }
  }

  bucket(callerKey: string, resource: RateResource): RateBucket {
    const key = `${callerKey}:${resource}`;
    const now = this.clock.now();
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.resetAt <= now) {
      const limit = this.limits[callerKey] ?? (callerKey === "anonymous" ? 60 : 5000);
      bucket = { resource, limit, used: 0, resetAt: now + HOUR_MS };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  exhausted(bucket: RateBucket, cost = 1): boolean {
    return bucket.used + cost > bucket.limit;
  }

  consume(bucket: RateBucket, cost = 1): void {
    bucket.used += cost;
  }

  reset(): void {
    this.buckets.clear();
  }
}

export function remaining(bucket: RateBucket): number {
  return Math.max(0, bucket.limit - bucket.used);
}

export function rateHeaders(bucket: RateBucket): Record<string, string> {
  return {
    "x-ratelimit-limit": String(bucket.limit),
    "x-ratelimit-remaining": String(remaining(bucket)),
    "x-ratelimit-used": String(bucket.used),
    "x-ratelimit-reset": String(Math.ceil(bucket.resetAt / 1000)),
    "x-ratelimit-resource": bucket.resource,
  };
}
