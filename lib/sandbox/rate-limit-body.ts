import type { components } from "@octokit/openapi-types";
import { remaining, type RateBucket } from "./sim-rate-limit";

type RateLimit = components["schemas"]["rate-limit"];

function entry(bucket: RateBucket): RateLimit {
  return { limit: bucket.limit, remaining: remaining(bucket), reset: Math.ceil(bucket.resetAt / 1000), used: bucket.used };
}

function fresh(limit: number, resetAt: number): RateLimit {
  return { limit, remaining: limit, reset: Math.ceil(resetAt / 1000), used: 0 };
}

/** The body of GET /rate_limit. */
export function rateLimits(core: RateBucket, graphql: RateBucket): components["schemas"]["rate-limit-overview"] {
  return {
    resources: {
      core: entry(core),
      graphql: entry(graphql),
      search: fresh(30, core.resetAt),
      code_search: fresh(10, core.resetAt),
      integration_manifest: fresh(5000, core.resetAt),
    },
    rate: entry(core),
  } satisfies components["schemas"]["rate-limit-overview"];
}
