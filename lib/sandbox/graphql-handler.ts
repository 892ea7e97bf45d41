import type { IncomingMessage, ServerResponse } from "node:http";
import { GitHubApiError } from "./api-error";
import { authenticate, type Caller } from "./auth";
import type { SimCore } from "./core";
import { runGraphql } from "./graphql";
import { parseBody, readRaw, sendJson } from "./http-util";
import { rateHeaders } from "./sim-rate-limit";
import { describeCaller, errorResult } from "./rest-handler";

/** POST /graphql: one point a query from the caller's GraphQL budget, counted per call. */
export async function handleGraphql(core: SimCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let caller: Caller;
  try {
    caller = authenticate(core.state, req.headers.authorization);
    if (caller.kind === "anonymous") throw new GitHubApiError(401, "This endpoint requires you to be authenticated.", undefined, {}, "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql");
    if (caller.kind === "app") throw new GitHubApiError(403, "Resource not accessible by integration");
  } catch (error) {
    const result = errorResult(error);
    return sendJson(res, result.status ?? 500, result.body, result.headers);
  }
  const bucket = core.rateLimits.bucket(caller.key, "graphql");
  if (core.rateLimits.exhausted(bucket)) {
    return sendJson(res, 200, { errors: [{ type: "RATE_LIMITED", message: `API rate limit exceeded for ${describeCaller(caller)}.` }] }, rateHeaders(bucket));
  }
  let body: { query?: unknown; variables?: unknown; operationName?: unknown };
  try {
    body = (parseBody(await readRaw(req), "application/json") ?? {}) as typeof body;
  } catch (error) {
    const result = errorResult(error);
    return sendJson(res, result.status ?? 400, result.body, rateHeaders(bucket));
  }
  core.rateLimits.consume(bucket);
  core.counters.record("graphql", caller.key, "POST /graphql");
  const result = await runGraphql(core, caller, bucket, body);
  sendJson(res, 200, result, rateHeaders(bucket));
}
