import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { GitHubApiError } from "./api-error";
import { authenticate, type Caller } from "./auth";
import type { SimCore } from "./core";
import { parseBody, readRaw, sendJson } from "./http-util";
import { rateHeaders, type RateBucket } from "./sim-rate-limit";
import type { RestContext, RestResult, RestRoute } from "./rest";
import type { Match } from "./router";

export function describeCaller(caller: Caller): string {
  switch (caller.kind) {
    case "installation":
      return `installation ID ${caller.installation.id}`;
    case "user":
      return `user ID ${caller.user.id}`;
    case "app":
      return "the GitHub App";
    default:
      return "your IP address";
  }
}

function etagOf(payload: string): string {
  return `W/"${createHash("sha256").update(payload).digest("hex").slice(0, 40)}"`;
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const strip = (tag: string): string => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => tag.trim() === "*" || strip(tag) === strip(etag));
}

export function errorResult(error: unknown): RestResult {
  if (error instanceof GitHubApiError) return { status: error.status, body: error.toBody(), headers: error.headers };
  console.error("[sim] internal error:", error);
  return { status: 500, body: { message: `Simulator error: ${error instanceof Error ? error.message : String(error)}`, documentation_url: "https://docs.github.com/rest" } };
}

/**
 * One REST call: authenticate, check the primary rate limit, run the handler, answer 304 to
 * a matching If-None-Match (not counted), else count the call and answer with the
 * rate-limit headers GitHub sends on every response.
 */
export async function handleRest(core: SimCore, req: IncomingMessage, res: ServerResponse, url: URL, match: Match<RestRoute>): Promise<void> {
  const method = req.method ?? "GET";
  const routeKey = `${method} ${match.template}`;
  const route = match.handler;
  const common = { "x-github-request-id": randomUUID(), "x-github-api-version-selected": "2022-11-28" };
  let caller: Caller = { kind: "anonymous", key: "anonymous" };
  try {
    if (route.auth !== "none") caller = authenticate(core.state, req.headers.authorization);
    if (route.auth === "app" && caller.kind !== "app") {
      throw new GitHubApiError(401, "A JSON web token could not be decoded", undefined, {}, "https://docs.github.com/rest");
    }
  } catch (error) {
    const result = errorResult(error);
    const bucket = core.rateLimits.bucket("anonymous", "core");
    return sendJson(res, result.status ?? 500, result.body, { ...common, ...rateHeaders(bucket), ...result.headers });
  }
  const bucket: RateBucket = core.rateLimits.bucket(caller.key, "core");
  if (!route.free && core.rateLimits.exhausted(bucket)) {
    const error = new GitHubApiError(403, `API rate limit exceeded for ${describeCaller(caller)}.`, undefined, {}, "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api");
    return sendJson(res, 403, error.toBody(), { ...common, ...rateHeaders(bucket) });
  }
  let result: RestResult;
  try {
    const body = method === "GET" || method === "HEAD" ? undefined : parseBody(await readRaw(req), req.headers["content-type"]);
    const ctx: RestContext = { core, state: core.state, render: core.render, req, url, params: match.params, query: url.searchParams, body, caller };
    result = await route.handler(ctx);
  } catch (error) {
    result = errorResult(error);
  }
  const status = result.status ?? 200;
  const payload = result.raw ? result.raw.data : result.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(result.body));
  const etag = method === "GET" && status === 200 ? etagOf(payload.toString("latin1") + (result.headers?.link ?? "")) : undefined;
  if (etag && etagMatches(req.headers["if-none-match"], etag)) {
    core.counters.record("notModified", caller.key, routeKey);
    res.writeHead(304, { ...common, etag, ...rateHeaders(bucket) });
    res.end();
    return;
  }
  if (!route.free) core.rateLimits.consume(bucket);
  core.counters.record("rest", caller.key, routeKey);
  res.writeHead(status, {
    ...common,
    ...(payload.length ? { "content-type": result.raw?.contentType ?? "application/json; charset=utf-8" } : {}),
    ...(etag ? { etag, "cache-control": "private, max-age=60, s-maxage=60", vary: "Accept, Authorization, Cookie" } : {}),
    ...rateHeaders(bucket),
    ...result.headers,
    "content-length": String(payload.length),
  });
  res.end(payload);
}
