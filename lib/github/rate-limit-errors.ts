import { AtelierError, ForbiddenError, RateLimitError, UnauthorizedError } from "../errors";

/** GitHub asked us to wait (primary limit exhausted, or a secondary limit's Retry-After). */
export class GitHubRateLimitedError extends RateLimitError {
  constructor(
    readonly nextAllowedAt: Date,
    readonly resource: string,
    now: number,
  ) {
    const seconds = Math.max(1, Math.ceil((nextAllowedAt.getTime() - now) / 1000));
    super(
      "github_rate_limited",
      `GitHub's ${resource} rate limit for this installation says wait until ${nextAllowedAt.toISOString()} (${seconds} s); Atelier waits instead of retrying.`,
      seconds,
      { nextAllowedAt: nextAllowedAt.toISOString(), resource },
    );
  }
}

/** GitHub refused the App's own credential (the JWT): the private key or the App id is wrong. */
export class GitHubAppAuthError extends UnauthorizedError {
  constructor(appId: number, detail: string) {
    super(
      "github_app_auth_failed",
      `GitHub refused the App's JSON web token (${detail}): GITHUB_PRIVATE_KEY is not a private key of App ${appId}, or GITHUB_APP_ID is wrong. ` +
        "Generate a new private key in the App's settings on GitHub and set GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) to it.",
    );
  }
}

/** The installation is gone or suspended: nothing can be read with it. */
export class InstallationUnavailableError extends ForbiddenError {
  constructor(installationId: number, why: "suspended" | "missing") {
    super(
      why === "suspended" ? "installation_suspended" : "installation_missing",
      why === "suspended"
        ? `The App's installation ${installationId} is suspended: an owner of the account can unsuspend it in the account's GitHub settings (Applications).`
        : `The App's installation ${installationId} no longer exists: install the App again on the account.`,
      { installationId },
    );
  }
}

/** GitHub answered something else than success (after any conditional 304). */
export class GitHubRequestError extends AtelierError {
  constructor(
    readonly githubStatus: number,
    readonly route: string,
    message: string,
  ) {
    super("github_request_failed", `GitHub answered ${githubStatus} to ${route}: ${message}`, { githubStatus, route });
  }
}

/** The status and headers of an Octokit RequestError-like value; null for anything else. */
export function httpStatusOf(err: unknown): { status: number; headers: Record<string, string | number | undefined> } | null {
  if (typeof err !== "object" || err === null) return null;
  const status = (err as { status?: unknown }).status;
  if (typeof status !== "number") return null;
  const headers = (err as { response?: { headers?: Record<string, string | number | undefined> } }).response?.headers ?? {};
  return { status, headers };
}

/** One line for a poll error or a log: what failed, never a credential. */
export function describeError(err: unknown): string {
  if (err instanceof AtelierError) return err.message;
  const http = httpStatusOf(err);
  if (http) {
    const request = (err as { request?: { method?: string; url?: string } }).request;
    const where = request ? `${request.method ?? ""} ${stripQuery(request.url ?? "")}`.trim() : "a request";
    const message = err instanceof Error ? err.message.split("\n")[0]! : String(err);
    return `GitHub answered ${http.status} to ${where}: ${message}`;
  }
  if (err instanceof AggregateError && err.errors.length) return describeError(err.errors[0]);
  return err instanceof Error ? err.message : String(err);
}

function stripQuery(url: string): string {
  return url.replace(/\?.*$/, "");
}
