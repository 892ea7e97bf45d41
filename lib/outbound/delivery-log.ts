import { z } from "zod";
import { NotFoundError } from "../errors";
import type { Db } from "../store/db";
import { attemptDelivery, type DeliveryDeps, type DeliveryOutcome } from "./attempt-delivery";

/** The delivery log: every delivery with its tries and last answer, and the redeliver action. */

export interface DeliveryView {
  id: number;
  hookId: number;
  /** null when the hook was deleted since */
  url: string | null;
  installationId: number | null;
  hookRepo: string | null;
  hookLoop: string | null;
  runId: string;
  event: string;
  /** the Run's repository (from the payload) */
  repo: string;
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
  installation_id: number | null;
  hook_repo: string | null;
  hook_loop: string | null;
  run_id: string;
  event: string;
  repo: string;
  status: DeliveryView["status"];
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_at: Date;
  created_at: Date;
  delivered_at: Date | null;
}

const SELECT = `
SELECT d.id, d.hook_id, h.url, COALESCE(h.installation_id, (d.payload->'installation'->>'id')::bigint) AS installation_id,
       h.repo AS hook_repo, h.loop AS hook_loop, d.run_id, d.payload->>'event' AS event, d.payload->'run'->>'repo' AS repo,
       d.status, d.attempts, d.last_status, d.last_error, d.next_at, d.created_at, d.delivered_at
  FROM outbound_deliveries d LEFT JOIN outbound_hooks h ON h.id = d.hook_id`;

/** GET /api/v1/outbound/deliveries's query. */
export const deliveriesQuery = z.strictObject({
  hook: z.coerce.number().int().positive().optional(),
  run: z.string().min(1).max(300).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

const toView = (r: Row): DeliveryView => ({
  id: r.id,
  hookId: r.hook_id,
  url: r.url,
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
 * Newest first. `installationIds` / `repos` narrow it to the deliveries of those
 * installations' hooks and of those repositories' Loop hooks (null = all, for admins).
 */
export async function listDeliveries(
  db: Db,
  opts: { installationIds?: number[] | null; repos?: string[] | null; hookId?: number; runId?: string; limit?: number } = {},
): Promise<DeliveryView[]> {
  const all = opts.installationIds == null && opts.repos == null;
  const { rows } = await db.pool.query<Row>(
    `${SELECT}
      WHERE ($1::boolean OR (h.repo IS NULL AND h.installation_id = ANY($2)) OR h.repo = ANY($3))
        AND ($4::bigint IS NULL OR d.hook_id = $4) AND ($5::text IS NULL OR d.run_id = $5)
      ORDER BY d.created_at DESC, d.id DESC LIMIT $6`,
    [all, opts.installationIds ?? [], (opts.repos ?? []).map((r) => r.toLowerCase()), opts.hookId ?? null, opts.runId ?? null, opts.limit ?? 100],
  );
  return rows.map(toView);
}

export async function getDelivery(db: Db, id: number): Promise<DeliveryView> {
  const { rows } = await db.pool.query<Row>(`${SELECT} WHERE d.id = $1`, [id]);
  if (!rows[0]) throw new NotFoundError("delivery_not_found", `No delivery ${id}.`);
  return toView(rows[0]);
}

/**
 * Makes a delivery pending and due now with a fresh series of tries, whatever became of it,
 * under the same delivery id (a receiver that already has it can tell). The caller then tries
 * it at once (redeliverNow); the outbound sweep would find it anyway.
 */
export async function resetForRedelivery(db: Db, id: number): Promise<void> {
  const { rowCount } = await db.pool.query(
    `UPDATE outbound_deliveries SET status = 'pending', attempts = 0, next_at = now(), delivered_at = NULL WHERE id = $1`,
    [id],
  );
  if (!rowCount) throw new NotFoundError("delivery_not_found", `No delivery ${id}.`);
}

/**
 * The redeliver button: resets the delivery and tries it at once, here; a failure leaves it
 * pending on the backoff for the worker. Returns the delivery as it is after the try.
 */
export async function redeliverNow(deps: DeliveryDeps, id: number): Promise<{ delivery: DeliveryView; outcome: DeliveryOutcome }> {
  await resetForRedelivery(deps.db, id);
  const outcome = await attemptDelivery(deps, id);
  return { delivery: await getDelivery(deps.db, id), outcome };
}
