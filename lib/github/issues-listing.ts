import type { RestItem } from "../loops/projection";
import type { Octokit } from "./app-client";
import { conditionalGet, followPages } from "./conditional-request";
import { httpStatusOf } from "./rate-limit-errors";
import { splitRepo } from "./repo-name";

/** An issue or pull request as the issues listing returns it (pull requests carry `pull_request`). */
export type ListedItem = RestItem & { number: number; updated_at: string; author_association?: string; pull_request?: unknown };

export const MAX_LISTING_PAGES = 10;

export type Listing =
  | { modified: false }
  | { modified: true; items: ListedItem[]; etag: string | null; truncated: boolean };

/**
 * Change detection: the Items updated at or after `since` (all of them without it), oldest
 * change first, 100 a page, at most ten pages; with If-None-Match, an unchanged listing is a 304.
 */
export async function listChangedItems(
  octokit: Octokit,
  fullName: string,
  options: { since: Date | null; etag: string | null; maxPages?: number },
): Promise<Listing> {
  const { owner, repo } = splitRepo(fullName);
  const first = await conditionalGet<ListedItem[]>(
    octokit,
    "GET /repos/{owner}/{repo}/issues",
    {
      owner,
      repo,
      state: "all",
      sort: "updated",
      direction: "asc",
      per_page: 100,
      ...(options.since ? { since: options.since.toISOString() } : {}),
    },
    options.etag,
  );
  if (!first.modified) return { modified: false };
  const { items, truncated } = await followPages(octokit, first, options.maxPages ?? MAX_LISTING_PAGES);
  return { modified: true, items, etag: first.etag, truncated };
}

/** One issue or pull request through the issues API, or null when GitHub no longer has it. */
export async function getListedItem(octokit: Octokit, fullName: string, number: number): Promise<ListedItem | null> {
  const { owner, repo } = splitRepo(fullName);
  try {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/issues/{issue_number}", { owner, repo, issue_number: number });
    return data as unknown as ListedItem;
  } catch (err) {
    const status = httpStatusOf(err)?.status;
    if (status === 404 || status === 410) return null;
    throw err;
  }
}

/** A listed Item is a pull request when GitHub marks it so. */
export const isListedPullRequest = (item: Pick<ListedItem, "pull_request">): boolean => item.pull_request != null;
