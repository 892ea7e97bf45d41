import type { z } from "zod";
import { assertSameOrigin } from "../../lib/auth/csrf";
import type { Viewer } from "../../lib/auth/viewer";
import type { DashboardContext } from "../../lib/dashboard/services";
import { AtelierError, BadInputError, toHttpError } from "../../lib/errors";
import { requireViewer } from "../../lib/auth/authorize";
import { requireTokenScope, type TokenScope } from "../../lib/auth/api-tokens";
import { viewerFromApiRequest } from "../../lib/auth/current-viewer";
import { hasNul, nulPath } from "../../lib/http/url-ids";
import { API_BODY_LIMIT, assertDeclaredLength, readBodyLimited } from "../../lib/http/read-body";
import { dashboardContext } from "./services";

/**
 * The edge of the JSON API: every /api/v1 handler goes through `api()`, which refuses a body
 * declared over 64 KiB (413) and cross-origin writes, resolves the viewer (an API token's person,
 * or the session's) — a write without one is refused (401), a write with a read token (403),
 * before its body is read —, runs the handler, and maps any error to HTTP once
 * (toHttpError). Handlers only parse, and call one lib service.
 */

export interface ApiCall<P> {
  request: Request;
  params: P;
  viewer: Viewer | null;
  ctx: DashboardContext;
  /** the scope of the API token the request came with; null for a session */
  scope: TokenScope | null;
}

type Handler<P> = (call: ApiCall<P>) => Promise<unknown>;

const NO_STORE = { "cache-control": "no-store" };
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function api<P = Record<string, never>>(handler: Handler<P>) {
  return async (request: Request, route?: { params?: Promise<P> }): Promise<Response> => {
    try {
      assertDeclaredLength(request.headers.get("content-length"), API_BODY_LIMIT);
      assertSameOrigin(request.method, request.headers);
      const params = ((await route?.params) ?? {}) as P;
      // no route takes a NUL in its path (Postgres stores none): refused before any lookup
      if (Object.values(params as Record<string, unknown>).some((v) => typeof v === "string" && (hasNul(v) || v.length > 300))) {
        throw new BadInputError("invalid_id", "An id in the path is not of the right shape (too long, or with a NUL character).");
      }
      const ctx = dashboardContext();
      const { viewer, scope } = await viewerFromApiRequest(ctx.db, request.headers);
      // every write needs someone signed in (and a token of the act scope): refused before a byte of its body is parsed
      if (!SAFE_METHODS.has(request.method.toUpperCase())) requireViewer(viewer);
      requireTokenScope(scope, request.method);
      const result = await handler({ request, params, viewer, ctx, scope });
      if (result instanceof Response) return result;
      return Response.json(result, { headers: NO_STORE });
    } catch (err) {
      return errorResponse(err);
    }
  };
}

export function errorResponse(err: unknown): Response {
  const http = toHttpError(err);
  if (http.status === 503 && !(err instanceof AtelierError)) {
    console.error(`atelier: api answered 503 ${http.body.error}: ${(err as Error)?.message ?? String(err)}`);
  } else if (http.status >= 500 && !(err instanceof AtelierError)) {
    console.error(`atelier: api error: ${(err as Error)?.stack ?? String(err)}`);
  }
  return Response.json(http.body, { status: http.status, headers: { ...http.headers, ...NO_STORE } });
}

function issues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({
    path: i.path.map(String).join("."),
    message: i.code === "unrecognized_keys" ? `unknown field(s): ${i.keys.join(", ")}` : i.message,
  }));
}

/** The JSON body (at most 64 KiB, counted while read), parsed strictly by `schema`; an empty body reads as {}. */
export async function body<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  const text = await readBodyLimited(request.body, request.headers.get("content-length"), API_BODY_LIMIT);
  let value: unknown = {};
  if (text.trim()) {
    const type = request.headers.get("content-type") ?? "";
    if (!/^application\/json\b/i.test(type)) {
      throw new BadInputError("unsupported_content_type", "Send the body as JSON (Content-Type: application/json).");
    }
    try {
      value = JSON.parse(text);
    } catch {
      throw new BadInputError("invalid_json", "The body is not valid JSON.");
    }
  }
  const nul = nulPath(value);
  if (nul !== null) {
    throw new BadInputError("invalid_body", `The body is not valid: ${nul} holds a NUL character.`, { issues: [{ path: nul, message: "holds a NUL character" }] });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const list = issues(parsed.error);
    throw new BadInputError("invalid_body", `The body is not valid: ${list.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ")}.`, {
      issues: list,
    });
  }
  return parsed.data;
}

/** The query string, parsed strictly by `schema`. */
export function query<S extends z.ZodType>(request: Request, schema: S): z.output<S> {
  const parsed = parseQuery(Object.fromEntries(new URL(request.url).searchParams), schema);
  if (!parsed.ok) throw parsed.error;
  return parsed.data;
}

/**
 * A query's fields (the API's, or a page's search params), parsed strictly by `schema` after a
 * NUL in any key or value is refused: the data, or the 400 `invalid_query` that says why not.
 */
export function parseQuery<S extends z.ZodType>(
  params: Record<string, string | undefined>,
  schema: S,
): { ok: true; data: z.output<S> } | { ok: false; error: BadInputError } {
  const nul = Object.entries(params).find(([k, v]) => hasNul(k) || (v !== undefined && hasNul(v)));
  if (nul) return { ok: false, error: new BadInputError("invalid_query", `The query is not valid: ${nul[0].replace(/\u0000/g, "?")} holds a NUL character.`) };
  const parsed = schema.safeParse(params);
  if (parsed.success) return { ok: true, data: parsed.data };
  const list = issues(parsed.error);
  return {
    ok: false,
    error: new BadInputError("invalid_query", `The query is not valid: ${list.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ")}.`, {
      issues: list,
    }),
  };
}

/** A server-sent events response: never cached or transformed, never buffered by a proxy. */
export function eventStream(stream: ReadableStream<Uint8Array>): Response {
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
