/** Calls a route handler the way Next.js does: a web Request, and the params as a promise. */
export type RouteHandler<P> = (request: Request, route: { params: Promise<P> }) => Promise<Response>;

export interface CallOptions<P> {
  params?: P;
  body?: unknown;
  /** raw body text (overrides body) */
  raw?: string;
  cookie?: string | null;
  origin?: string | null;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export const ORIGIN = "http://localhost:3999";

export async function call<P>(handler: RouteHandler<P>, method: string, path: string, opts: CallOptions<P> = {}) {
  const url = new URL(path, ORIGIN);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  const headers = new Headers({ host: new URL(ORIGIN).host, ...(opts.headers ?? {}) });
  if (opts.cookie) headers.set("cookie", opts.cookie);
  if (method !== "GET" && opts.origin !== null) headers.set("origin", opts.origin ?? ORIGIN);
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const res = await handler(new Request(url, { method, headers, body }), { params: Promise.resolve((opts.params ?? {}) as P) });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    json = { text };
  }
  return { status: res.status, body: json, headers: res.headers };
}
