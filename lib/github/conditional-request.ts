import type { Octokit } from "./app-client";
import { httpStatusOf } from "./rate-limit-errors";

export type Conditional<T> =
  | { modified: true; data: T; etag: string | null; link: string | null }
  | { modified: false };

/**
 * A GET sent with If-None-Match when an ETag is known. GitHub answers 304 with no body when the
 * resource did not change, and an authorized 304 does not count against the rate limit.
 */
export async function conditionalGet<T>(
  octokit: Octokit,
  route: string,
  params: Record<string, unknown>,
  etag: string | null,
): Promise<Conditional<T>> {
  try {
    const response = await octokit.request(route, {
      ...params,
      headers: { ...(etag ? { "if-none-match": etag } : {}) },
    });
    const headers = response.headers as Record<string, string | undefined>;
    return { modified: true, data: response.data as T, etag: headers.etag ?? null, link: headers.link ?? null };
  } catch (err) {
    if (httpStatusOf(err)?.status === 304) return { modified: false };
    throw err;
  }
}

/** The `rel="next"` URL of a Link header, or null. */
export function nextPageUrl(link: string | null | undefined): string | null {
  if (!link) return null;
  for (const part of link.split(",")) {
    const match = /<([^>]+)>\s*;\s*rel="next"/.exec(part.trim());
    if (match) return match[1]!;
  }
  return null;
}

/** Follows `rel="next"` from a first page, at most `maxPages` pages in all. */
export async function followPages<T>(
  octokit: Octokit,
  first: { data: T[]; link: string | null },
  maxPages: number,
): Promise<{ items: T[]; truncated: boolean }> {
  const items = [...first.data];
  let next = nextPageUrl(first.link);
  let pages = 1;
  while (next && pages < maxPages) {
    const response = await octokit.request(`GET ${next}`);
    items.push(...(response.data as T[]));
    next = nextPageUrl((response.headers as Record<string, string | undefined>).link);
    pages += 1;
  }
  return { items, truncated: next !== null };
}
