import { agentFailure, infraFailure, type Failure } from "../../engine/failure";

/**
 * Turns a model API error, as the agent reported it, into a typed Failure: 401/403 or an
 * invalid key → authentication (not retried: the key must be fixed); 429, 529 and overload →
 * InfraFailure rate_limit, other 5xx and lost connections → InfraFailure transport (both
 * retried by Atelier with backoff). The message is the agent's own sentence.
 */

const MAX_REASON = 500;

/** The HTTP status a sentence names ("API Error: 529 …", "unexpected status 401 …"), or null. */
export function statusInText(text: string): number | null {
  const m = /(?:API Error|status(?: code)?|HTTP)[:\s]+(\d{3})\b/i.exec(text);
  return m ? Number(m[1]) : null;
}

const AUTH = /invalid api key|invalid x-api-key|incorrect api key|authentication|unauthori[sz]ed|not logged in|please run \/login|forbidden|permission_error/i;
const RATE = /rate.?limit|too many requests|overloaded|quota exceeded/i;
const TRANSPORT =
  /connection (?:error|refused|reset|closed)|econnrefused|econnreset|etimedout|socket hang up|fetch failed|network error|stream disconnected|request timed out|timed out|internal server error|server error|bad gateway|service unavailable|gateway timeout|high demand|temporary errors/i;

/** The kind of an API error: null when the status and text name none. */
export function apiErrorCategory(status: number | null, text: string): "authentication" | "rate_limit" | "transport" | null {
  if (status === 401 || status === 403) return "authentication";
  if (status === 429 || status === 529) return "rate_limit";
  if (status !== null && status >= 500 && status <= 599) return RATE.test(text) ? "rate_limit" : "transport";
  if (AUTH.test(text)) return "authentication";
  if (RATE.test(text)) return "rate_limit";
  if (TRANSPORT.test(text)) return "transport";
  return null;
}

export function reason(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > MAX_REASON ? `${one.slice(0, MAX_REASON - 1)}…` : one;
}

/** The Failure of an API error, or null when it is not one we know. */
export function apiFailure(agentName: string, status: number | null, text: string): Failure | null {
  const category = apiErrorCategory(status ?? statusInText(text), text);
  const why = reason(text) || (status ? `HTTP ${status}` : "an API error");
  if (category === "authentication") return agentFailure("authentication", `agent ${agentName}: the model API refused its credentials: ${why}`);
  if (category === "rate_limit") return infraFailure("rate_limit", `agent ${agentName}: the model API is rate limited or overloaded: ${why}`);
  if (category === "transport") return infraFailure("transport", `agent ${agentName}: the model API could not be reached or failed: ${why}`);
  return null;
}
