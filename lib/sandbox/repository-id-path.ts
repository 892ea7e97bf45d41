import type { SimState } from "./state/sim-state";

const BY_NAME = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/;
const BY_ID = /^\/repositories\/(\d+)(\/.*)?$/;

/**
 * GitHub's pagination links name a repository by its id (`/repositories/1296269/issues?page=2`),
 * not by owner/name: the path a `Link` header carries for a `/repos/{owner}/{repo}/…` path.
 */
export function pathByRepositoryId(state: SimState, pathname: string): string {
  const match = BY_NAME.exec(pathname);
  const repo = match?.[1] && match[2] ? state.findRepo(match[1], match[2]) : undefined;
  return repo ? `/repositories/${repo.id}${match?.[3] ?? ""}` : pathname;
}

/** `/repositories/{id}/…` → `/repos/{owner}/{repo}/…`, so every route answers both; unknown ids stay as they are (404). */
export function pathByRepositoryName(state: SimState, pathname: string): string {
  const match = BY_ID.exec(pathname);
  const repo = match?.[1] ? state.repos.get(Number(match[1])) : undefined;
  return repo ? `/repos/${state.fullName(repo)}${match?.[2] ?? ""}` : pathname;
}
