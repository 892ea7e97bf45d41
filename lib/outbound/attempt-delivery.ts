import { metrics } from "../metrics/metrics";
import type { Db } from "../store/db";
import { retryDelayMs } from "./backoff";
import { postWebhook, DELIVERY_TIMEOUT_MS } from "./post-webhook";
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signatureHeader } from "./signature";
import type { TargetPolicy } from "./target-policy";

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

interface Claimed {
  id: number;
  attempts: number;
  payload: { event: string };
  url: string | null;
  secret: string | null;
}

export async function attemptDelivery(deps: DeliveryDeps, deliveryId: number): Promise<DeliveryOutcome> {
  const { rows } = await deps.db.pool.query<Claimed>(
    `WITH c AS (
       UPDATE outbound_deliveries SET attempts = attempts + 1, next_at = now() + make_interval(secs => $2)
        WHERE id = $1 AND status = 'pending' AND next_at <= now()
       RETURNING id, hook_id, attempts, payload)
     SELECT c.id, c.attempts, c.payload, h.url, h.secret FROM c LEFT JOIN outbound_hooks h ON h.id = c.hook_id`,
    [deliveryId, CLAIM_SECONDS],
  );
  const claimed = rows[0];
  if (!claimed) return { tag: "NotDue" };
  if (claimed.url === null || claimed.secret === null) {
    await record(deps.db, claimed, { status: "failed", lastStatus: null, error: "the webhook was deleted", delayMs: null });
    return { tag: "GaveUp", tries: claimed.attempts, error: "the webhook was deleted" };
  }
  const body = JSON.stringify(claimed.payload);
  const result = await postWebhook(
    claimed.url,
    body,
    {
      [SIGNATURE_HEADER]: signatureHeader(claimed.secret, body),
      [DELIVERY_HEADER]: String(claimed.id),
      [EVENT_HEADER]: claimed.payload.event,
    },
    deps.policy,
    deps.timeoutMs,
  );
  if (result.ok) {
    await record(deps.db, claimed, { status: "delivered", lastStatus: result.status, error: null, delayMs: null });
    return { tag: "Delivered", status: result.status!, tries: claimed.attempts };
  }
  const error = result.error ?? "failed";
  const delayMs = (deps.delayFor ?? retryDelayMs)(claimed.attempts);
  if (delayMs === null) {
    await record(deps.db, claimed, { status: "failed", lastStatus: result.status, error, delayMs: null });
    return { tag: "GaveUp", tries: claimed.attempts, error };
  }
  await record(deps.db, claimed, { status: "pending", lastStatus: result.status, error, delayMs });
  return { tag: "Retry", delayMs, tries: claimed.attempts, error };
}

async function record(
  db: Db,
  claimed: Claimed,
  o: { status: "pending" | "delivered" | "failed"; lastStatus: number | null; error: string | null; delayMs: number | null },
): Promise<void> {
  metrics.outboundDeliveries.inc({ outcome: o.status === "pending" ? "retry" : o.status });
  await db.pool.query(
    `UPDATE outbound_deliveries
        SET status = $3, last_status = $4, last_error = $5,
            next_at = CASE WHEN $6::float8 IS NULL THEN next_at ELSE now() + make_interval(secs => $6::float8 / 1000) END,
            delivered_at = CASE WHEN $3 = 'delivered' THEN now() ELSE delivered_at END
      WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [claimed.id, claimed.attempts, o.status, o.lastStatus, o.error?.slice(0, 1000) ?? null, o.delayMs],
  );
}

/** Ids of pending deliveries due now, oldest first: the sweep's work. */
export async function dueDeliveries(db: Db, limit = 50): Promise<number[]> {
  const { rows } = await db.pool.query<{ id: number }>(
    `SELECT id FROM outbound_deliveries WHERE status = 'pending' AND next_at <= now() ORDER BY next_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.id);
}

/** Ids of a Run's pending deliveries due now (after its state changed). */
export async function dueDeliveriesOfRun(db: Db, runId: string): Promise<number[]> {
  const { rows } = await db.pool.query<{ id: number }>(
    `SELECT id FROM outbound_deliveries WHERE run_id = $1 AND status = 'pending' AND next_at <= now() ORDER BY id`,
    [runId],
  );
  return rows.map((r) => r.id);
}
