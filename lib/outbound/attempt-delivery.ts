import { metrics } from "../metrics/metrics";
import type { Db } from "../store/kernel/db";
import { claimDelivery, recordDeliveryTry, type ClaimedDelivery, type DeliveryTry } from "../store/outbound/outbound-deliveries";
import { retryDelayMs } from "./backoff";
import { isNoticePayload } from "./notices";
import { slackMessage } from "./slack-message";
import { postWebhook, DELIVERY_TIMEOUT_MS } from "./post-webhook";
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signatureHeader } from "./signature";
import type { TargetPolicy } from "../http/resolver";

/** The due deliveries, where the outbound worker (jobs/processors/outbound.ts) imports them from. */
export { dueDeliveries, dueDeliveriesOfRun } from "../store/outbound/outbound-deliveries";

/**
 * One try of one delivery row. Whoever calls it — the queue's job, the sweep, a redeliver —
 * first claims the row: a due pending row gets its try counted and its next_at pushed past the
 * try's timeout, so a second caller finds it not due and does nothing; a caller that dies
 * mid-try leaves a row that becomes due again by itself. The outcome is written only if the row
 * still holds this try (fenced by the try count).
 */

export interface DeliveryDeps {
  db: Db;
  policy: TargetPolicy;
  /** Delay before the next try after `tries` failed ones; null gives up (default: backoff.ts). */
  delayFor?: (tries: number) => number | null;
  timeoutMs?: number;
}

export type DeliveryOutcome =
  | { tag: "Delivered"; status: number; tries: number }
  | { tag: "Retry"; delayMs: number; tries: number; error: string }
  | { tag: "GaveUp"; tries: number; error: string }
  | { tag: "NotDue" };

/** How long a claimed try owns its row: past the POST's timeout, with room to write the outcome. */
const CLAIM_SECONDS = Math.ceil(DELIVERY_TIMEOUT_MS / 1000) * 3;

export async function attemptDelivery(deps: DeliveryDeps, deliveryId: number): Promise<DeliveryOutcome> {
  const claimed = await claimDelivery(deps.db, deliveryId, CLAIM_SECONDS);
  if (!claimed) return { tag: "NotDue" };
  if (claimed.url === null || claimed.secret === null) {
    await record(deps.db, claimed, { status: "failed", lastStatus: null, error: "the webhook was deleted", delayMs: null });
    return { tag: "GaveUp", tries: claimed.attempts, error: "the webhook was deleted" };
  }
  const request = requestOf(claimed, claimed.secret);
  if (!request) {
    await record(deps.db, claimed, { status: "failed", lastStatus: null, error: NOT_A_NOTICE, delayMs: null });
    return { tag: "GaveUp", tries: claimed.attempts, error: NOT_A_NOTICE };
  }
  const result = await postWebhook(claimed.url, request.body, request.headers, deps.policy, deps.timeoutMs);
  if (result.ok) {
    await record(deps.db, claimed, { status: "delivered", lastStatus: result.status, error: null, delayMs: null });
    return { tag: "Delivered", status: result.status!, tries: claimed.attempts };
  }
  const error = result.error ?? "failed";
  const delayMs = isPermanent(result.status) ? null : (deps.delayFor ?? retryDelayMs)(claimed.attempts);
  if (delayMs === null) {
    await record(deps.db, claimed, { status: "failed", lastStatus: result.status, error, delayMs: null });
    return { tag: "GaveUp", tries: claimed.attempts, error };
  }
  await record(deps.db, claimed, { status: "pending", lastStatus: result.status, error, delayMs });
  return { tag: "Retry", delayMs, tries: claimed.attempts, error };
}

const NOT_A_NOTICE = "a Slack target is sent notices only";

/**
 * A receiver's answer no later try can change: a 4xx other than 408 (Request Timeout) and 429
 * (Too Many Requests) — a wrong URL (404), a removed Slack webhook (403 `invalid_token`, 404
 * `no_service`, 410 `channel_is_archived`), a payload refused (400). It fails at once with its
 * status; a redeliver tries it again.
 */
const isPermanent = (status: number | null): boolean => status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429;

/**
 * What a try sends: a webhook gets the payload signed; a Slack target the notice as a Block Kit
 * message (its URL is its credential; Slack reads no signature). Null: nothing a Slack target can show.
 */
function requestOf(claimed: ClaimedDelivery, secret: string): { body: string; headers: Record<string, string> } | null {
  if (claimed.kind === "slack") {
    return isNoticePayload(claimed.payload) ? { body: JSON.stringify(slackMessage(claimed.payload)), headers: {} } : null;
  }
  const body = JSON.stringify(claimed.payload);
  return {
    body,
    headers: {
      [SIGNATURE_HEADER]: signatureHeader(secret, body),
      [DELIVERY_HEADER]: String(claimed.id),
      [EVENT_HEADER]: claimed.payload.event,
    },
  };
}

async function record(db: Db, claimed: ClaimedDelivery, o: DeliveryTry): Promise<void> {
  metrics.outboundDeliveries.inc({ outcome: o.status === "pending" ? "retry" : o.status });
  await recordDeliveryTry(db, claimed, o);
}
