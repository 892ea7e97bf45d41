import { ConflictError } from "../errors";
import type { Octokit } from "./app-client";
import { httpStatusOf } from "./rate-limit-errors";
import { splitRepo } from "./repo-name";

/**
 * Branches and refs moved by the REST API (no git on the web process): a writer's Push of held
 * commits makes their branch point at them — the objects are on GitHub already, under the held
 * ref — and a Discard deletes that ref.
 */

/** `refs/heads/x` → `heads/x`: the REST API names a ref without its `refs/`. */
const restRef = (ref: string): string => ref.replace(/^refs\//, "");

/** The sha `branch` points at, or null when it does not exist. */
async function branchSha(octokit: Octokit, fullName: string, branch: string): Promise<string | null> {
  const { owner, repo } = splitRepo(fullName);
  try {
    const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", { owner, repo, ref: `heads/${branch}` });
    return data.object.sha;
  } catch (err) {
    if (httpStatusOf(err)?.status === 404) return null;
    throw err;
  }
}

/**
 * Points `branch` at `sha`, leased on `expected` (its sha when the work began; null: it did not
 * exist): created when missing, moved (forced: the branch is the Run's own, and the agent may
 * have rewritten its commits) when it is still where it was. A branch already at `sha` is left
 * as it is (a second press). A branch someone moved meanwhile is a 409 `branch_moved`.
 */
export async function setBranch(octokit: Octokit, fullName: string, branch: string, sha: string, expected: string | null): Promise<void> {
  const { owner, repo } = splitRepo(fullName);
  const current = await branchSha(octokit, fullName, branch);
  if (current === sha) return;
  if (current !== expected) {
    throw new ConflictError("branch_moved", `${branch} moved on GitHub since the agent's Attempt began (now ${current === null ? "deleted" : current.slice(0, 12)}): nothing was overwritten. Discard these commits and retry the Item.`, {
      branch,
      expected,
      current,
    });
  }
  if (current === null) await octokit.request("POST /repos/{owner}/{repo}/git/refs", { owner, repo, ref: `refs/heads/${branch}`, sha });
  else await octokit.request("PATCH /repos/{owner}/{repo}/git/refs/{ref}", { owner, repo, ref: `heads/${branch}`, sha, force: true });
}

/** Deletes a ref (`refs/atelier/held/<run id>`); one already gone is no error. */
export async function deleteRef(octokit: Octokit, fullName: string, ref: string): Promise<void> {
  const { owner, repo } = splitRepo(fullName);
  try {
    await octokit.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", { owner, repo, ref: restRef(ref) });
  } catch (err) {
    const status = httpStatusOf(err)?.status;
    if (status === 404 || status === 422) return;
    throw err;
  }
}
