import { callGitHub, GitHubCallError, repoParams, type GitHubClient } from "./github-client";
import { roleOfPermissionAnswer, type RepoRole } from "../github/github-user-api";

/** Operating a Run (approve, retry, cancel) takes write access to its repository (maintain and admin reach it). */
export const canOperateRuns = (role: RepoRole): boolean => role === "write" || role === "maintain" || role === "admin";

/** The person's role on the repository; "none" when GitHub does not know them there. */
export async function collaboratorRole(client: GitHubClient, repo: string, login: string): Promise<RepoRole> {
  try {
    const { data } = await callGitHub("read a collaborator's permission", () =>
      client.request("GET /repos/{owner}/{repo}/collaborators/{username}/permission", { ...repoParams(repo), username: login }),
    );
    return roleOfPermissionAnswer(data);
  } catch (err) {
    if (err instanceof GitHubCallError && err.githubStatus === 404) return "none";
    throw err;
  }
}
