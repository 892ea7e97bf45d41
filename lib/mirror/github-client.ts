import { AtelierError } from "../errors";
import { rateLimitRefusal, SECONDARY_BACKOFF_MS } from "../github/rate-limit-refusal";

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

/** GitHub's rate-limit reading of a failed call (lib/github's one classification), or null. */
function refusalOf(err: unknown) {
  const status = githubStatus(err);
  if (status === null) return null;
  const message = err instanceof Error ? err.message : "";
  return rateLimitRefusal(status, (err as ErrorLike | null)?.response?.headers ?? {}, message);
}

/** A primary or secondary rate limit, as rateLimitRefusal reads it (a 429 always is). */
export function isRateLimited(err: unknown): boolean {
  return refusalOf(err) !== null;
}

/** Worth trying again later: GitHub was down or slow (5xx), limited us, or the network failed. */
export function isTransientGitHubError(err: unknown): boolean {
  const status = githubStatus(err);
  if (status === null) return typeof (err as ErrorLike | null)?.code === "string" || err instanceof TypeError;
  return status >= 500 || isRateLimited(err);
}

/**
 * How long GitHub asked us to wait: Atelier's own refusal's seconds, `retry-after`, or until
 * `x-ratelimit-reset`; a secondary limit that names no wait waits a minute.
 */
export function retryAfterMs(err: unknown, now: number = Date.now()): number | null {
  const seconds = (err as ErrorLike | null)?.retryAfterSeconds;
  if (typeof seconds === "number" && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const refusal = refusalOf(err);
  if (refusal?.kind === "secondary") return refusal.retryAfterMs ?? SECONDARY_BACKOFF_MS;
  if (refusal?.kind === "primary" && refusal.resetAt !== null) return Math.max(0, refusal.resetAt - now);
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
    super(retryable ? "github_unavailable" : "github_refused", message, { githubStatus, retryable });
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
