import { callGitHub, GitHubCallError, repoParams, type GitHubClient } from "./github-client";

/** A person's role on a repository, as GitHub's collaborator permission API names it. */
export type RepoRole = "admin" | "write" | "read" | "none";

/** Operating a Run (approve, retry, cancel) takes write access to its repository. */
export const canOperateRuns = (role: RepoRole): boolean => role === "write" || role === "admin";

/** The person's role on the repository; "none" when GitHub does not know them there. */
export async function collaboratorRole(client: GitHubClient, repo: string, login: string): Promise<RepoRole> {
  try {
    const { data } = await callGitHub("read a collaborator's permission", () =>
      client.request("GET /repos/{owner}/{repo}/collaborators/{username}/permission", { ...repoParams(repo), username: login }),
    );
    const permission = String(data?.permission ?? "none");
    return permission === "admin" || permission === "write" || permission === "read" ? permission : "none";
  } catch (err) {
    if (err instanceof GitHubCallError && err.githubStatus === 404) return "none";
    throw err;
  }
}
