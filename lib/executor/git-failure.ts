import { agentFailure, infraFailure, type Failure } from "../engine/failure";
import { classifyGitError, GitCommandError } from "./git";
import type { Redactor } from "./redact";

/**
 * Typed failures for git talking to the remote. Fetching is Atelier's own business: a refused
 * credential or a broken network is an InfraFailure. Pushing carries the agent's work: a
 * refusal of that work (a credential that may not touch workflows, a declined hook, a protected
 * branch) is an AgentFailure, a broken network an InfraFailure, and a branch that moved under
 * us an InfraFailure too (the retry starts from the moved branch).
 */

export function fetchFailure(err: unknown, redactor: Redactor, what: string): Failure {
  if (!(err instanceof GitCommandError)) return infraFailure("tool_error", redactor.redact(`${what}: ${String(err)}`));
  const message = redactor.redact(`${what}: ${err.message}`);
  switch (classifyGitError(err.stderr)) {
    case "authentication":
    case "not_found":
      return infraFailure("authentication", message);
    case "transport":
      return infraFailure("transport", message);
    default:
      return infraFailure("tool_error", message);
  }
}

export function pushFailure(err: unknown, redactor: Redactor, branch: string): Failure {
  const what = `pushing ${branch} failed`;
  if (!(err instanceof GitCommandError)) return infraFailure("tool_error", redactor.redact(`${what}: ${String(err)}`));
  const message = redactor.redact(`${what}: ${err.message}`);
  switch (classifyGitError(err.stderr)) {
    case "authentication":
    case "not_found":
      return agentFailure("authentication", message);
    case "transport":
      return infraFailure("transport", message);
    case "rejected":
      return infraFailure("transport", redactor.redact(`${branch} moved on the remote during the Attempt; nothing was overwritten (${err.message})`));
    case "declined":
      return agentFailure("configuration", message);
    default:
      return infraFailure("tool_error", message);
  }
}
