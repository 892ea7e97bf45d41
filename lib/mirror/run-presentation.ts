import { isRetryableCategory, type FailureCategory } from "../engine/failure";
import { MAX_AUTO_ATTEMPTS } from "../engine/retry";
import { describeQuotaWaitingReason } from "../metering/waiting-reason";
import { ENGINE_FAILED_REASON } from "../store/runs/engine-failures";
import type { RunSnapshot } from "./run-snapshot";

/**
 * Small, pure facts about a Run that both of its GitHub faces (the check run and the Item
 * comment) say the same way.
 */

/** The Run's page on the dashboard. */
export function runPageUrl(publicUrl: string, runId: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/runs/${runId}`;
}

/** The waiting reason that parks a Run on its Loop's approval gate. */
export const APPROVAL_REASON = "approval";

/** Waiting on a person's approval (a Waiting Run without another reason). */
export const isAwaitingApproval = (s: Pick<RunSnapshot, "state" | "waitingReason">): boolean =>
  s.state === "Waiting" && (s.waitingReason === null || s.waitingReason === APPROVAL_REASON);

/**
 * Why something other than approval holds the Run (a quota's refusal, `quota:<token>`), as a
 * sentence; null when nothing does.
 */
export function heldReason(s: Pick<RunSnapshot, "waitingReason">): string | null {
  if (!s.waitingReason || s.waitingReason === APPROVAL_REASON) return null;
  if (s.waitingReason === ENGINE_FAILED_REASON) return "Atelier failed moving this Run several times (an engine failure, not the agent's); an operator can retry or cancel it.";
  return describeQuotaWaitingReason(s.waitingReason) ?? `Held: ${s.waitingReason}.`;
}

/** Canceled because a newer Event replaced it before it started. */
export const isSuperseded = (s: Pick<RunSnapshot, "state" | "cancelReason">): boolean =>
  s.state === "Canceled" && s.cancelReason === "Superseded";

/** Canceled because the Item stopped matching the Loop. */
export const isRevoked = (s: Pick<RunSnapshot, "state" | "cancelReason">): boolean =>
  s.state === "Canceled" && s.cancelReason === "Revoked";

/**
 * A Run that ended without ever starting because the Item moved on (superseded or revoked):
 * worth updating where it already shows, not worth a new check run or comment.
 */
export const isQuietEnd = (s: Pick<RunSnapshot, "state" | "cancelReason">): boolean => isSuperseded(s) || isRevoked(s);

/**
 * The number of the Attempt a Running Run is on: the open one, or the next one when the
 * latest ended (an operator or automatic retry whose Attempt has not begun yet).
 */
export function currentAttemptNumber(s: Pick<RunSnapshot, "latestAttempt">): number {
  const latest = s.latestAttempt;
  if (!latest) return 1;
  return latest.state === "Running" ? latest.number : latest.number + 1;
}

/** "3m 12s", "45s", "1h 02m". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, "0")}s`;
  return `${s}s`;
}

/** "$0.42", "~$0.42" when estimated; cents below a cent show as "<$0.01". */
export function formatCost(usd: number, estimated: boolean): string {
  const text = usd > 0 && usd < 0.01 ? "<$0.01" : `$${usd.toFixed(2)}`;
  return estimated ? `~${text}` : text;
}

/**
 * A model name as the agent reported it, fit to quote on GitHub: a plain identifier
 * (`claude-sonnet-4-5`, `gpt-5.1-codex`, `us.anthropic/claude@v2`); anything else is the agent's
 * own text and is not posted.
 */
export function quotableModel(model: string | null): string | null {
  return model !== null && /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,99}$/.test(model) ? model : null;
}

/**
 * "model `claude-sonnet-4-5` · 3 turns · duration 3m 12s · cost $0.42 (exact)", as
 * claude-code-action's tracking comment says it; null when nothing was measured. An estimate
 * shows as "~$0.42"; a cost the agent's report gave, exactly, says so.
 */
export function usageLine(
  s: Pick<RunSnapshot, "durationMs" | "costUsd" | "costEstimated"> & Partial<Pick<RunSnapshot, "costExact" | "model" | "turns">>,
): string | null {
  const parts: string[] = [];
  const model = quotableModel(s.model ?? null);
  if (model) parts.push(`model \`${model}\``);
  if (s.turns !== undefined && s.turns !== null) parts.push(`${s.turns} turn${s.turns === 1 ? "" : "s"}`);
  if (s.durationMs !== null) parts.push(`duration ${formatDuration(s.durationMs)}`);
  if (s.costUsd !== null) parts.push(`cost ${formatCost(s.costUsd, s.costEstimated)}${s.costExact && !s.costEstimated ? " (exact)" : ""}`);
  return parts.length ? parts.join(" · ") : null;
}

/** Cuts a text to `max` characters, saying so. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * What a failure's category means, in words for GitHub. The failure's own message is never
 * posted there: it may quote the agent (its last error line, its report), which is text an
 * injected agent writes; it stays on the Run page, behind the dashboard's permissions.
 */
const CATEGORY_SENTENCES: Record<FailureCategory, string> = {
  authentication: "a credential was refused",
  configuration: "the agent or the Loop is not configured right",
  invalid_model: "the model API does not know the model asked for",
  gateway_rate_limit: "the model API rate limited it or was overloaded",
  gateway_timeout: "the model API did not answer in time",
  gateway_error: "the model API failed or could not be reached",
  mcp_discovery: "an MCP server of the agent did not start",
  mcp_transport: "an MCP server of the agent went away mid-run",
  tool_denied: "the agent asked for a tool it is not permitted",
  step_limit: "the agent used all the turns it is allowed",
  timeout: "it ran past its time limit",
  transport: "the network failed it",
  git_error: "git failed",
  lease_lost: "its worker lost it",
  agent_exit: "the agent exited with an error",
  budget: "the agent spent its budget",
  canceled: "it was canceled",
  internal: "Atelier itself failed",
};

export function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function failureSentence(category: FailureCategory): string {
  return CATEGORY_SENTENCES[category];
}

/** What the category's `retryable` meant for this Run, in the words the API's flag stands for. */
export function retrySentence(category: FailureCategory): string {
  return isRetryableCategory(category)
    ? `retryable: Atelier retried it by itself, up to ${MAX_AUTO_ATTEMPTS} Attempts`
    : "not retryable: Atelier does not retry it by itself";
}