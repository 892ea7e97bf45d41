import { createHash, timingSafeEqual } from "node:crypto";
import { UnauthorizedError } from "../errors";
import "./gauges";
import { METRICS_CONTENT_TYPE, metricsText } from "../metrics/metrics";

/**
 * GET /metrics, on the web process and on the worker's health port: the registry's text, behind
 * the bearer token ATELIER_METRICS_TOKEN (compared in constant time). Without a token it is
 * refused, unless the operator says ATELIER_METRICS_OPEN=true (a private network, a sidecar):
 * the dashboard's port is public, and the metrics name repositories, Loops and volumes.
 */

/** What /metrics asks for: the token, or nothing (`open`: the operator opened it). */
export type MetricsAccess = { token: string } | "open";

/** The configured access: the token when set, `open` when ATELIER_METRICS_OPEN=true, else a token no header can match. */
export function metricsToken(env: NodeJS.ProcessEnv = process.env): MetricsAccess | null {
  const token = env.ATELIER_METRICS_TOKEN?.trim();
  if (token) return { token };
  return env.ATELIER_METRICS_OPEN?.trim().toLowerCase() === "true" ? "open" : null;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Throws 401 `metrics_unauthorized` unless /metrics is open or the Authorization header carries the token. */
export function assertMetricsAuthorized(authorization: string | null | undefined, access: MetricsAccess | null): void {
  if (access === "open") return;
  if (access === null) {
    throw new UnauthorizedError("metrics_unauthorized", "GET /metrics is closed: set ATELIER_METRICS_TOKEN and send `Authorization: Bearer <token>` (or ATELIER_METRICS_OPEN=true on a private network).");
  }
  const given = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1] ?? "";
  if (!timingSafeEqual(digest(given), digest(access.token))) {
    throw new UnauthorizedError("metrics_unauthorized", "GET /metrics needs `Authorization: Bearer <ATELIER_METRICS_TOKEN>`.");
  }
}

export interface MetricsAnswer {
  contentType: string;
  body: string;
}

export async function scrapeMetrics(authorization: string | null | undefined, access: MetricsAccess | null = metricsToken()): Promise<MetricsAnswer> {
  assertMetricsAuthorized(authorization, access);
  return { contentType: METRICS_CONTENT_TYPE, body: await metricsText() };
}
