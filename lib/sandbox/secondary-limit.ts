import type { ServerResponse } from "node:http";
import type { SimClock } from "./sim-clock";
import { sendJson } from "./http-util";

/** How the simulator's secondary limit on content-creating requests behaves (setSecondaryLimit). */
export interface SecondaryLimitInput {
  /** Content-creating requests one caller may make in a minute (GitHub documents 80, the default); null turns the limit off. */
  perMinute: number | null;
  /** Seconds in `retry-after` (default 60, a minute); null sends none, as GitHub sometimes does. */
  retryAfter?: number | null;
  /** 403 (default) or 429. */
  limitStatus?: 403 | 429;
}

export interface SecondaryLimitAnswer {
  retryAfter: number | null;
  limitStatus: 403 | 429;
}

const WINDOW_MS = 60_000;

/** GitHub's documented limit: no more than 80 content-generating requests a minute; the refusal asks for a minute. */
export const ORGANIC: Required<SecondaryLimitInput> = { perMinute: 80, retryAfter: 60, limitStatus: 403 };
const CREATES = new Set(["POST", "PATCH", "PUT", "DELETE"]);

/** Requests that create content: REST writes on repositories (not token minting, git or GraphQL). */
const createsContent = (method: string, path: string): boolean => CREATES.has(method) && path.startsWith("/repos/");

/**
 * GitHub's secondary limit on bursts of content-creating requests, really counted: a caller
 * that makes more than `perMinute` of them within a minute (the simulator's clock) is refused
 * until its oldest one leaves the window — and each refusal is itself counted, as GitHub
 * counts requests made while limited.
 */
export class SecondaryLimit {
  private config: Required<SecondaryLimitInput> = ORGANIC;
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly clock: SimClock) {}

  configure(input: SecondaryLimitInput): void {
    const perMinute = input.perMinute === null ? null : Number(input.perMinute);
    if (perMinute !== null && !(Number.isInteger(perMinute) && perMinute > 0)) {
      throw new Error(`setSecondaryLimit wants perMinute a positive integer or null, got ${String(input.perMinute)}`);
    }
    this.config = { perMinute, retryAfter: input.retryAfter === undefined ? ORGANIC.retryAfter : input.retryAfter, limitStatus: input.limitStatus === 429 ? 429 : 403 };
    this.recent.clear();
  }

  /** The refusal this request gets, or null; `caller` is read only for content-creating requests. */
  trip(method: string, path: string, caller: () => string): SecondaryLimitAnswer | null {
    const { perMinute } = this.config;
    if (perMinute === null || !createsContent(method, path)) return null;
    const key = caller();
    const now = this.clock.now();
    const times = (this.recent.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    times.push(now);
    this.recent.set(key, times);
    if (times.length <= perMinute) return null;
    return { retryAfter: this.config.retryAfter, limitStatus: this.config.limitStatus };
  }
}

/** GitHub's answer to a request over a secondary limit; `x-ratelimit-remaining` stays what it was. */
export function sendSecondaryLimit(res: ServerResponse, rateHeaders: Record<string, string>, status: 403 | 429, retryAfter: number | null): void {
  sendJson(
    res,
    status,
    {
      message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
      documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    },
    { ...rateHeaders, ...(retryAfter === null ? {} : { "retry-after": String(retryAfter) }) },
  );
}
