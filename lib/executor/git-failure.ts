import { agentFailure, infraFailure, type Failure } from "../engine/failure";
import { classifyGitError, git, GitCommandError, type GitErrorClass, type GitOptions, type GitResult } from "./git";
import type { Redactor } from "../secrets/redact";

/**
 * Typed failures for git talking to the remote. A refused credential waits for an operator (an
 * AgentFailure, not retried: the App must be given the repository again); a broken network is a
 * transport InfraFailure and git failing in a way it does not name a git_error one (both retried,
 * and reported retryable). Pushing carries the agent's work: a refusal of that work (a credential
 * that may not touch workflows, a declined hook, a protected branch) is an AgentFailure, and a
 * branch that moved under us an InfraFailure (the retry starts from the moved branch).
 */

export function fetchFailure(err: unknown, redactor: Redactor, what: string): Failure {
  return remoteFailure(err, redactor, what, (kind, message) => (kind === "authentication" || kind === "not_found" ? agentFailure("authentication", message) : null));
}

export function pushFailure(err: unknown, redactor: Redactor, branch: string): Failure {
  return remoteFailure(err, redactor, `pushing ${branch} failed`, (kind, message, gitError) => {
    switch (kind) {
      case "authentication":
      case "not_found":
        return agentFailure("authentication", message);
      case "rejected":
        return infraFailure("transport", redactor.redact(`${branch} moved on the remote during the Attempt; nothing was overwritten (${gitError.message})`));
      case "declined":
        return agentFailure("configuration", message);
      default:
        return null;
    }
  });
}

/**
 * A failure of git talking to the remote: `byKind` decides the kinds of git error it knows
 * (given the redacted message); a broken network is a transport InfraFailure, the rest a git_error one.
 */
function remoteFailure(
  err: unknown,
  redactor: Redactor,
  what: string,
  byKind: (kind: GitErrorClass, message: string, gitError: GitCommandError) => Failure | null,
): Failure {
  if (!(err instanceof GitCommandError)) return infraFailure("git_error", redactor.redact(`${what}: ${String(err)}`));
  const message = redactor.redact(`${what}: ${err.message}`);
  const kind = classifyGitError(err.stderr);
  return byKind(kind, message, err) ?? infraFailure(kind === "transport" ? "transport" : "git_error", message);
}

/**
 * Runs a git command that talks to the remote; its failure is thrown as `failed(err)`, unless
 * the Attempt was stopped meanwhile (then as it is).
 */
export async function remoteGit(args: string[], options: GitOptions, failed: (err: unknown) => Error): Promise<GitResult> {
  try {
    return await git(args, options);
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw failed(err);
  }
}
