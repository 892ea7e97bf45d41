import type { Db } from "../kernel/db";
import { first, query, raw, rows, sql } from "../kernel/sql";

/**
 * Outbound deliveries (`outbound_deliveries`): one row per hook and terminal state, written in
 * the state's transaction (terminal-deliveries.ts), tried by whoever claims it (the queue's
 * job, the sweep, a redeliver) and kept as the delivery log.
 */

/** A delivery claimed for one try, with its hook's URL and secret (null when the hook was deleted since). */
export interface ClaimedDelivery {
  id: number;
  attempts: number;
  payload: { event: string };
  url: string | null;
  secret: string | null;
  /** the target's kind (null when it was deleted) */
  kind: "webhook" | "slack" | null;
}

/**
 * Claims a due pending delivery for one try: its try is counted and its next_at pushed
 * `claimSeconds` ahead, so a second caller finds it not due; a caller that dies mid-try leaves
 * a row that becomes due again by itself. Undefined when it is not due (or not pending).
 */
export function claimDelivery(db: Db, deliveryId: number, claimSeconds: number): Promise<ClaimedDelivery | undefined> {
  return first<ClaimedDelivery>(
    db.pool,
    sql`WITH c AS (
          UPDATE outbound_deliveries SET attempts = attempts + 1, next_at = now() + make_interval(secs => ${claimSeconds})
           WHERE id = ${deliveryId} AND status = 'pending' AND next_at <= now()
          RETURNING id, hook_id, attempts, payload)
        SELECT c.id, c.attempts, c.payload, h.url, h.secret, h.kind FROM c LEFT JOIN outbound_hooks h ON h.id = c.hook_id`,
  );
}

/** A try's outcome; `delayMs` sets the next try (null keeps next_at). */
export interface DeliveryTry {
  status: "pending" | "delivered" | "failed";
  lastStatus: number | null;
  error: string | null;
  delayMs: number | null;
}

/** Writes a try's outcome, only if the row still holds that try (pending, and its try count unchanged). */
export async function recordDeliveryTry(db: Db, claimed: Pick<ClaimedDelivery, "id" | "attempts">, o: DeliveryTry): Promise<void> {
  await query(
    db.pool,
    sql`UPDATE outbound_deliveries
           SET status = ${o.status}, last_status = ${o.lastStatus}, last_error = ${o.error?.slice(0, 1000) ?? null},
               next_at = CASE WHEN ${o.delayMs}::float8 IS NULL THEN next_at ELSE now() + make_interval(secs => ${o.delayMs}::float8 / 1000) END,
               delivered_at = CASE WHEN ${o.status}::text = 'delivered' THEN now() ELSE delivered_at END
         WHERE id = ${claimed.id} AND attempts = ${claimed.attempts} AND status = 'pending'`,
  );
}

/** Ids of pending deliveries due now, oldest first: the sweep's work. */
export async function dueDeliveries(db: Db, limit = 50): Promise<number[]> {
  const due = await rows<{ id: number }>(
    db.pool,
    sql`SELECT id FROM outbound_deliveries WHERE status = 'pending' AND next_at <= now() ORDER BY next_at LIMIT ${limit}`,
  );
  return due.map((r) => r.id);
}

/** Ids of a Run's pending deliveries due now (after its state changed). */
export async function dueDeliveriesOfRun(db: Db, runId: string): Promise<number[]> {
  const due = await rows<{ id: number }>(
    db.pool,
    sql`SELECT id FROM outbound_deliveries WHERE run_id = ${runId} AND status = 'pending' AND next_at <= now() ORDER BY id`,
  );
  return due.map((r) => r.id);
}

/** A delivery as the log shows it. */
export interface DeliveryView {
  id: number;
  hookId: number;
  /** null when the hook was deleted since */
  url: string | null;
  /** the target's kind (null when it was deleted since) */
  kind: "webhook" | "slack" | null;
  installationId: number | null;
  hookRepo: string | null;
  hookLoop: string | null;
  /** null for a notice about no Run (a budget ask, a config error, a test delivery) */
  runId: string | null;
  event: string;
  /** the repository (from the payload); null for a test delivery */
  repo: string | null;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAt: Date;
  createdAt: Date;
  deliveredAt: Date | null;
}

interface Row {
  id: number;
  hook_id: number;
  url: string | null;
  kind: "webhook" | "slack" | null;
  installation_id: number | null;
  hook_repo: string | null;
  hook_loop: string | null;
  run_id: string | null;
  event: string;
  repo: string | null;
  status: DeliveryView["status"];
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_at: Date;
  created_at: Date;
  delivered_at: Date | null;
}

const SELECT = raw(`
SELECT d.id, d.hook_id, h.url, h.kind, COALESCE(h.installation_id, (d.payload->'installation'->>'id')::bigint) AS installation_id,
       h.repo AS hook_repo, h.loop AS hook_loop, d.run_id, d.payload->>'event' AS event, COALESCE(d.payload->'run'->>'repo', d.payload->'notice'->>'repo') AS repo,
       d.status, d.attempts, d.last_status, d.last_error, d.next_at, d.created_at, d.delivered_at
  FROM outbound_deliveries d LEFT JOIN outbound_hooks h ON h.id = d.hook_id`);

const toView = (r: Row): DeliveryView => ({
  id: r.id,
  hookId: r.hook_id,
  url: r.url,
  kind: r.kind,
  installationId: r.installation_id,
  hookRepo: r.hook_repo,
  hookLoop: r.hook_loop,
  runId: r.run_id,
  event: r.event,
  repo: r.repo,
  status: r.status,
  attempts: r.attempts,
  lastStatus: r.last_status,
  lastError: r.last_error,
  nextAt: r.next_at,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
});

/**
 * Newest first, at most `limit`: the deliveries of the installation hooks of `installationIds`
 * and of the Loop hooks of `repos` (lower-cased owner/name; both null: every delivery),
 * narrowed to one hook or one Run when given.
 */
export async function listDeliveryViews(
  db: Db,
  opts: { installationIds: number[] | null; repos: string[] | null; hookId: number | null; runId: string | null; limit: number },
): Promise<DeliveryView[]> {
  const all = opts.installationIds === null && opts.repos === null;
  const found = await rows<Row>(
    db.pool,
    sql`${SELECT}
         WHERE (${all}::boolean OR (h.repo IS NULL AND h.installation_id = ANY(${opts.installationIds ?? []})) OR h.repo = ANY(${opts.repos ?? []}))
           AND (${opts.hookId}::bigint IS NULL OR d.hook_id = ${opts.hookId}) AND (${opts.runId}::text IS NULL OR d.run_id = ${opts.runId})
         ORDER BY d.created_at DESC, d.id DESC LIMIT ${opts.limit}`,
  );
  return found.map(toView);
}

export async function findDeliveryView(db: Db, id: number): Promise<DeliveryView | undefined> {
  const row = await first<Row>(db.pool, sql`${SELECT} WHERE d.id = ${id}`);
  return row && toView(row);
}

/**
 * Makes a delivery pending and due now with a fresh series of tries, under the same delivery
 * id; false when there is no such delivery. Due as of a second ago: the try that follows at
 * once (the redeliver button) runs in another transaction, whose now() can come out earlier
 * where the machine's clock stepped back between the two (seen on the CI's VMs).
 */
export async function resetDeliveryForRetry(db: Db, id: number): Promise<boolean> {
  const { rowCount } = await query(
    db.pool,
    sql`UPDATE outbound_deliveries SET status = 'pending', attempts = 0, next_at = now() - interval '1 second', delivered_at = NULL WHERE id = ${id}`,
  );
  return (rowCount ?? 0) > 0;
}
