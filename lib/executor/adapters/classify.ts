import { agentFailure, infraFailure, type Failure } from "../../engine/failure";

/**
 * Turns a model API error, as the agent reported it (the HTTP status the gateway passed on,
 * and the CLI's sentence), into a typed Failure: 401/403 or an invalid key → authentication;
 * 404 of a model, or a sentence saying the model does not exist → invalid_model (both not
 * retried: the roster must change); 429, 529 and overload → gateway_rate_limit; 504 and timed-out
 * requests → gateway_timeout; other 5xx and lost connections → gateway_error (the three
 * InfraFailures Atelier retries). The message is the agent's own sentence.
 */

const MAX_REASON = 500;

/** The HTTP status a sentence names ("API Error: 529 …", "unexpected status 401 …"), or null. */
export function statusInText(text: string): number | null {
  const m = /(?:API Error|status(?: code)?|HTTP)[:\s]+(\d{3})\b/i.exec(text);
  return m ? Number(m[1]) : null;
}

const AUTH = /invalid api key|invalid x-api-key|incorrect api key|authentication|unauthori[sz]ed|not logged in|please run \/login|forbidden|permission_error/i;
const MODEL = /model_not_found|model: \S+|model [`'"]?[\w.:/-]+[`'"]? does not exist|issue with the selected model|(?:unknown|invalid|unsupported) model/i;
const RATE = /rate.?limit|too many requests|overloaded|quota exceeded/i;
const TIMEOUT = /gateway timeout|request timed out|timed out|etimedout|deadline exceeded/i;
const UNREACHABLE =
  /connection (?:error|refused|reset|closed)|econnrefused|econnreset|socket hang up|fetch failed|network error|stream disconnected|internal server error|server error|bad gateway|service unavailable|high demand|temporary errors/i;

export type ApiErrorCategory = "authentication" | "invalid_model" | "gateway_rate_limit" | "gateway_timeout" | "gateway_error";

/** The kind of an API error: null when the status and text name none. */
export function apiErrorCategory(status: number | null, text: string): ApiErrorCategory | null {
  if (status === 401 || status === 403) return "authentication";
  if ((status === 404 || status === 400) && MODEL.test(text)) return "invalid_model";
  if (status === 429 || status === 529) return "gateway_rate_limit";
  if (status === 504 || status === 408) return "gateway_timeout";
  if (status !== null && status >= 500 && status <= 599) return RATE.test(text) ? "gateway_rate_limit" : "gateway_error";
  if (AUTH.test(text)) return "authentication";
  if (MODEL.test(text)) return "invalid_model";
  if (RATE.test(text)) return "gateway_rate_limit";
  if (TIMEOUT.test(text)) return "gateway_timeout";
  if (UNREACHABLE.test(text)) return "gateway_error";
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
  switch (category) {
    case "authentication":
      return agentFailure("authentication", `agent ${agentName}: the model API refused its credentials: ${why}`);
    case "invalid_model":
      return agentFailure("invalid_model", `agent ${agentName}: the model API does not know the model asked for: ${why}`);
    case "gateway_rate_limit":
      return infraFailure("gateway_rate_limit", `agent ${agentName}: the model API is rate limited or overloaded: ${why}`);
    case "gateway_timeout":
      return infraFailure("gateway_timeout", `agent ${agentName}: the model API did not answer in time: ${why}`);
    case "gateway_error":
      return infraFailure("gateway_error", `agent ${agentName}: the model API could not be reached or failed: ${why}`);
    case null:
      return null;
  }
}
