import { createHash, timingSafeEqual } from "node:crypto";
import { UnauthorizedError } from "../errors";
import "./gauges";
import { METRICS_CONTENT_TYPE, metricsText } from "../metrics/metrics";

/**
 * GET /metrics, on the web process and on the worker's health port: the registry's text, behind
 * a bearer token when ATELIER_METRICS_TOKEN is set (compared in constant time).
 */

/** The configured token, or null when /metrics is open (a private network, a sidecar). */
export function metricsToken(env: NodeJS.ProcessEnv = process.env): string | null {
  const token = env.ATELIER_METRICS_TOKEN?.trim();
  return token ? token : null;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Throws 401 `metrics_unauthorized` unless the Authorization header carries the token. */
export function assertMetricsAuthorized(authorization: string | null | undefined, token: string | null): void {
  if (token === null) return;
  const given = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1] ?? "";
  if (!timingSafeEqual(digest(given), digest(token))) {
    throw new UnauthorizedError("metrics_unauthorized", "GET /metrics needs `Authorization: Bearer <ATELIER_METRICS_TOKEN>`.");
  }
}

export interface MetricsAnswer {
  contentType: string;
  body: string;
}

export async function scrapeMetrics(authorization: string | null | undefined, token: string | null = metricsToken()): Promise<MetricsAnswer> {
  assertMetricsAuthorized(authorization, token);
  return { contentType: METRICS_CONTENT_TYPE, body: await metricsText() };
}
