import { QUOTA_WAITING_PREFIX } from "../store/metering/repo-metering";
import { isAdmissionToken, tokenSentence, type AdmissionToken } from "./refusal";

export const quotaWaitingReason = (token: AdmissionToken): string => `${QUOTA_WAITING_PREFIX}${token}`;

/** The token of a quota waiting reason, or null when the reason is something else (e.g. approval). */
export function quotaTokenOf(waitingReason: string | null | undefined): AdmissionToken | null {
  if (!waitingReason?.startsWith(QUOTA_WAITING_PREFIX)) return null;
  const token = waitingReason.slice(QUOTA_WAITING_PREFIX.length);
  return isAdmissionToken(token) ? token : null;
}

/** A sentence for a quota waiting reason (for the check run's summary); null when it is not one. */
export function describeQuotaWaitingReason(waitingReason: string | null | undefined): string | null {
  const token = quotaTokenOf(waitingReason);
  return token ? tokenSentence(token) : null;
}
