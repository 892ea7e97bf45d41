import { AtelierError, outageOf, toHttpError } from "../../lib/errors";

export type Loaded<T> = { ok: true; data: T } | { ok: false; status: number; token: string; message: string };

/**
 * Runs a page's read; a refusal (403, 404, 502 from GitHub…) or an outage (503
 * `database_unavailable`, `queue_unavailable`) becomes data the page renders in its own words
 * instead of an error page. Anything unexpected still reaches error.tsx.
 */
export async function load<T>(read: () => Promise<T>): Promise<Loaded<T>> {
  try {
    return { ok: true, data: await read() };
  } catch (err) {
    if (!(err instanceof AtelierError) && !outageOf(err)) throw err;
    const http = toHttpError(err);
    return { ok: false, status: http.status, token: http.body.error, message: http.body.message };
  }
}

/** A page's search parameters, as Next.js hands them over. */
export type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** The page's query as given, empty fields left out (the filter form sends them). */
export function givenQuery(sp: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(sp)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value) out[k] = value;
  }
  return out;
}
