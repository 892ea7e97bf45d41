import type { IncomingMessage } from "node:http";
import { authorizeRepo, type Need } from "./access";
import { GitHubApiError, validationFailed } from "./api-error";
import type { Caller } from "./auth";
import type { SimCore } from "./core";
import type { SimRepo } from "./model";
import type { RenderContext } from "./render/context";
import type { SimState } from "./state/sim-state";
import { pathByRepositoryId } from "./repository-id-path";

export interface RestContext {
  core: SimCore;
  state: SimState;
  render: RenderContext;
  req: IncomingMessage;
  url: URL;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  caller: Caller;
}

export interface RestResult {
  status?: number;
  body?: unknown;
  /** A non-JSON answer (raw file contents). */
  raw?: { contentType: string; data: Buffer };
  headers?: Record<string, string>;
}

export type RestHandler = (ctx: RestContext) => RestResult | Promise<RestResult>;

export interface RestRoute {
  /** "app": an App JWT; "none": no credential needed; default: whatever the handler checks. */
  auth?: "app" | "none";
  /** Not counted against the rate limit (GET /rate_limit). */
  free?: boolean;
  handler: RestHandler;
}

export type RouteTable = Array<[method: string, template: string, route: RestRoute]>;

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * The routes of a repository's resources, by path below `/repos/{owner}/{repo}` and then by
 * method: `repoScoped({ "/labels": { GET: listLabels, POST: postLabel } })`. Paths are matched
 * in the order given.
 */
export function repoScoped(paths: Record<string, Partial<Record<Method, RestHandler>>>): RouteTable {
  const table: RouteTable = [];
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, handler] of Object.entries(methods)) table.push([method, `/repos/{owner}/{repo}${path}`, { handler }]);
  }
  return table;
}

export function param(ctx: RestContext, name: string): string {
  const value = ctx.params[name];
  if (value === undefined) throw new Error(`route has no {${name}}`);
  return value;
}

export function numberParam(ctx: RestContext, name: string): number {
  const value = Number(param(ctx, name));
  if (!Number.isInteger(value) || value <= 0) throw new GitHubApiError(404, "Not Found");
  return value;
}

/** The `{owner}/{repo}` of the route, authorized for `need`. */
export function repoOf(ctx: RestContext, need: Need): SimRepo {
  return authorizeRepo(ctx.state, ctx.caller, param(ctx, "owner"), param(ctx, "repo"), need);
}

export function stringField(body: Record<string, unknown>, name: string, resource: string, required = false): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) {
    if (required) throw validationFailed([{ resource, field: name, code: "missing_field" }]);
    return undefined;
  }
  if (typeof value !== "string") throw validationFailed([{ resource, field: name, code: "invalid", value }]);
  return value;
}

export function stringList(value: unknown, resource: string, field: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw validationFailed([{ resource, field, code: "invalid", message: `${field} must be a list of strings` }]);
  }
  return value as string[];
}

/** GitHub's `per_page` (default 30, at most 100) and `page` with a Link header. */
export function paginate<T>(ctx: RestContext, items: T[]): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(ctx.query.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(ctx.query.get("page") ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const link = (n: number, rel: string): string => {
    const query = new URLSearchParams(ctx.query);
    query.set("page", String(n));
    if (!query.has("per_page") && perPage !== 30) query.set("per_page", String(perPage));
    return `<${ctx.core.baseUrl}${pathByRepositoryId(ctx.state, ctx.url.pathname)}?${query.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, "prev"), link(1, "first"));
  if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
  return { page: slice, headers: links.length ? { link: links.join(", ") } : {} };
}

/** ISO 8601 query parameter (e.g. `since`); 422 when it does not parse. */
export function timeQuery(ctx: RestContext, name: string): number | null {
  const value = ctx.query.get(name);
  if (!value) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw validationFailed([{ resource: "Search", field: name, code: "invalid", value }]);
  return ms;
}
