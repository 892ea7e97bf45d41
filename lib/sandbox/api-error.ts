/**
 * GitHub's error dialect: `{ message, documentation_url, errors? }` with the status GitHub
 * would use. Thrown by the state and the routes; the server writes it once.
 */
export interface GitHubValidationError {
  resource?: string;
  field?: string;
  code: string;
  message?: string;
  value?: unknown;
}

export class GitHubApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: GitHubValidationError[],
    readonly headers: Record<string, string> = {},
    readonly documentationUrl = "https://docs.github.com/rest",
  ) {
    super(message);
    this.name = "GitHubApiError";
  }

  toBody(): { message: string; documentation_url: string; errors?: GitHubValidationError[]; status: string } {
    return {
      message: this.message,
      documentation_url: this.documentationUrl,
      ...(this.errors ? { errors: this.errors } : {}),
      status: String(this.status),
    };
  }
}

export const notFound = (): GitHubApiError => new GitHubApiError(404, "Not Found");

export function validationFailed(errors: GitHubValidationError[], message = "Validation Failed"): GitHubApiError {
  return new GitHubApiError(422, message, errors, {}, "https://docs.github.com/rest");
}

export const badCredentials = (): GitHubApiError =>
  new GitHubApiError(401, "Bad credentials", undefined, { "www-authenticate": 'Bearer realm="GitHub"' });

export const requiresAuthentication = (): GitHubApiError =>
  new GitHubApiError(401, "Requires authentication", undefined, { "www-authenticate": 'Bearer realm="GitHub"' });

export const notAccessibleByIntegration = (): GitHubApiError =>
  new GitHubApiError(403, "Resource not accessible by integration");
