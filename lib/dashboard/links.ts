import { gitHubEnv } from "../github/github-env";

/** Links to GitHub pages (github.com, an Enterprise Server, or the sandbox simulator). */
export function issueUrl(repo: string, number: number, kind = "issue"): string {
  return `${gitHubEnv().webUrl}/${repo}/${kind === "pull_request" || kind === "pull" ? "pull" : "issues"}/${number}`;
}

export function pullRequestUrl(repo: string, number: number): string {
  return `${gitHubEnv().webUrl}/${repo}/pull/${number}`;
}

export function repositoryUrl(repo: string): string {
  return `${gitHubEnv().webUrl}/${repo}`;
}

export function configFileUrl(repo: string, branch = "main"): string {
  return `${gitHubEnv().webUrl}/${repo}/blob/${branch}/.github/atelier.yml`;
}
