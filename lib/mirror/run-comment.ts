import { callGitHub, gitHubCallError, githubStatus, repoParams, type GitHubClient } from "./github-client";
import { isRunComment } from "./run-comment-view";

/** Pages of 100 comments searched for a Run's marker before creating its comment. */
const MARKER_SEARCH_PAGES = 30;

/**
 * The Run's comment on the Item that an earlier sync created but could not remember (it
 * stopped between the create call and the store): found by its hidden marker.
 */
export async function findRunComment(client: GitHubClient, repo: string, number: number, runId: string): Promise<number | null> {
  for (let page = 1; page <= MARKER_SEARCH_PAGES; page++) {
    const { data } = await callGitHub("list the comments of an item", () =>
      client.request("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", {
        ...repoParams(repo),
        issue_number: number,
        per_page: 100,
        page,
      }),
    );
    const comments = (data ?? []) as Array<{ id: number; body?: string | null }>;
    const found = comments.find((c) => isRunComment(c.body, runId));
    if (found) return Number(found.id);
    if (comments.length < 100) return null;
  }
  return null;
}

/** Edits a comment; false when it no longer exists (someone deleted it). */
async function editComment(client: GitHubClient, repo: string, id: number, body: string): Promise<boolean> {
  try {
    await client.request("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", { ...repoParams(repo), comment_id: id, body });
    return true;
  } catch (err) {
    if (githubStatus(err) === 404) return false;
    throw gitHubCallError(err, "edit the Run's comment");
  }
}

/**
 * Makes the Run's one comment on the Item say `body`: edits the known one, else the one that
 * carries the Run's marker, else creates it. Returns the comment's id; the caller stores a new
 * id at once, so the comment is never created twice.
 */
export async function showRunComment(
  client: GitHubClient,
  repo: string,
  number: number,
  runId: string,
  known: number | null,
  body: string,
): Promise<number> {
  if (known !== null && (await editComment(client, repo, known, body))) return known;
  const found = await findRunComment(client, repo, number, runId);
  if (found !== null && (await editComment(client, repo, found, body))) return found;
  const { data } = await callGitHub("comment on the item", () =>
    client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { ...repoParams(repo), issue_number: number, body }),
  );
  return Number(data.id);
}
