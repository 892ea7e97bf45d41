import { AtelierError } from "../errors";

/**
 * The slice of an Octokit the mirror uses: `request(route, parameters)`. An installation
 * Octokit (Probot's, or @octokit/core's) fits as it is.
 */
export interface GitHubResponse {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- GitHub's JSON, read field by field
  data: any;
  headers: Record<string, string | number | undefined>;
}

export interface GitHubClient {
  request(route: string, parameters?: Record<string, unknown>): Promise<GitHubResponse>;
}

/** An installation's client, by installation id. */
export type InstallationClients = (installationId: number) => Promise<GitHubClient>;

/** "owner/name" → the route parameters. */
export function repoParams(fullName: string): { owner: string; repo: string } {
  const slash = fullName.indexOf("/");
  return { owner: fullName.slice(0, slash), repo: fullName.slice(slash + 1) };
}

interface ErrorLike {
  status?: unknown;
  /** Atelier's own GitHub errors carry GitHub's status here (their `status` is Atelier's answer). */
  githubStatus?: unknown;
  /** Atelier's rate limit refusals (lib/github's gate) say how long to wait. */
  retryAfterSeconds?: unknown;
  code?: unknown;
  message?: unknown;
  response?: { headers?: Record<string, string | number | undefined> };
}

/** The HTTP status of an Octokit error, or null (a network failure). */
export function githubStatus(err: unknown): number | null {
  const e = err as ErrorLike | null;
  if (typeof e?.githubStatus === "number") return e.githubStatus;
  return typeof e?.status === "number" ? e.status : null;
}

const header = (err: unknown, name: string): string | null => {
  const value = (err as ErrorLike | null)?.response?.headers?.[name];
  return value === undefined ? null : String(value);
};

/** A primary or secondary rate limit: 429, or 403 with `retry-after` or `x-ratelimit-remaining: 0`. */
export function isRateLimited(err: unknown): boolean {
  const status = githubStatus(err);
  if (status === 429) return true;
  return status === 403 && (header(err, "retry-after") !== null || header(err, "x-ratelimit-remaining") === "0");
}

/** Worth trying again later: GitHub was down or slow (5xx), limited us, or the network failed. */
export function isTransientGitHubError(err: unknown): boolean {
  const status = githubStatus(err);
  if (status === null) return typeof (err as ErrorLike | null)?.code === "string" || err instanceof TypeError;
  return status >= 500 || isRateLimited(err);
}

/** How long GitHub asked us to wait: `retry-after` seconds, or until `x-ratelimit-reset`. */
export function retryAfterMs(err: unknown, now: number = Date.now()): number | null {
  const seconds = (err as ErrorLike | null)?.retryAfterSeconds;
  if (typeof seconds === "number" && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const after = header(err, "retry-after");
  if (after !== null && Number.isFinite(Number(after))) return Math.max(0, Number(after) * 1000);
  if (header(err, "x-ratelimit-remaining") === "0") {
    const reset = Number(header(err, "x-ratelimit-reset"));
    if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - now);
  }
  return null;
}

/**
 * A GitHub call of the mirror failed. `retryable` says whether trying again later may work (5xx,
 * rate limit, network); `retryAfterMs` is how long GitHub asked us to wait, when it said.
 */
export class GitHubCallError extends AtelierError {
  constructor(
    readonly retryable: boolean,
    readonly retryAfterMs: number | null,
    readonly githubStatus: number | null,
    message: string,
  ) {
    super(retryable ? "github_unavailable" : "github_refused", message, 502, { githubStatus, retryable });
  }
}

/** Wraps a failed GitHub call into a GitHubCallError that says what was being done. */
export function gitHubCallError(err: unknown, doing: string): GitHubCallError {
  if (err instanceof GitHubCallError) return err;
  const status = githubStatus(err);
  const why = err instanceof Error ? err.message : String(err);
  return new GitHubCallError(
    isTransientGitHubError(err),
    retryAfterMs(err),
    status,
    `Could not ${doing} on GitHub${status !== null ? ` (HTTP ${status})` : ""}: ${why}`,
  );
}

/** Runs one GitHub call, turning its failure into a GitHubCallError. */
export async function callGitHub<T>(doing: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw gitHubCallError(err, doing);
  }
}
