import { z } from "zod";
import { NotFoundError } from "../errors";
import type { Db } from "../store/kernel/db";
import { findDeliveryView, listDeliveryViews, resetDeliveryForRetry, type DeliveryView } from "../store/outbound/outbound-deliveries";
import { attemptDelivery, type DeliveryDeps, type DeliveryOutcome } from "./attempt-delivery";
import { maskedSlackUrl } from "./hooks";

/** The delivery log: every delivery with its tries and last answer, and the redeliver action. */

export type { DeliveryView };

/** GET /api/v1/outbound/deliveries's query. */
export const deliveriesQuery = z.strictObject({
  hook: z.coerce.number().int().positive().optional(),
  run: z.string().min(1).max(300).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/**
 * Newest first. `installationIds` / `repos` narrow it to the deliveries of those
 * installations' hooks and of those repositories' Loop hooks (null = all, for admins).
 */
export async function listDeliveries(
  db: Db,
  opts: { installationIds?: number[] | null; repos?: string[] | null; hookId?: number; runId?: string; limit?: number } = {},
): Promise<DeliveryView[]> {
  const found = await listDeliveryViews(db, {
    installationIds: opts.installationIds ?? null,
    repos: opts.repos ? opts.repos.map((r) => r.toLowerCase()) : null,
    hookId: opts.hookId ?? null,
    runId: opts.runId ?? null,
    limit: opts.limit ?? 100,
  });
  return found.map(masked);
}

/** A delivery as the log shows it: a Slack target's URL masked (its path is its credential). */
const masked = (d: DeliveryView): DeliveryView => (d.kind === "slack" && d.url ? { ...d, url: maskedSlackUrl(d.url) } : d);

/** What a delivery that does not exist, or that the viewer may not know of, answers. */
export const deliveryNotFound = (id: number): NotFoundError => new NotFoundError("delivery_not_found", `No delivery ${id}.`);

export async function getDelivery(db: Db, id: number): Promise<DeliveryView> {
  const delivery = await findDeliveryView(db, id);
  if (!delivery) throw deliveryNotFound(id);
  return masked(delivery);
}

/**
 * Makes a delivery pending and due now with a fresh series of tries, whatever became of it,
 * under the same delivery id (a receiver that already has it can tell). The caller then tries
 * it at once (redeliverNow); the outbound sweep would find it anyway.
 */
export async function resetForRedelivery(db: Db, id: number): Promise<void> {
  if (!(await resetDeliveryForRetry(db, id))) throw deliveryNotFound(id);
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
