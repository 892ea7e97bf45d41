import type { Db } from "../store/db";

export type DeliveryStatus = "accepted" | "duplicate" | "filtered" | "invalid";

export interface DeliveryRecord {
  id: string;
  event: string;
  action: string | null;
  status: Exclude<DeliveryStatus, "duplicate">;
  installationId: number | null;
}

/**
 * Logs a delivery by its X-GitHub-Delivery id. Returns false when that id was already logged:
 * a redelivery (or a retry) of something already handled, which must change nothing.
 */
export async function recordDelivery(db: Db, delivery: DeliveryRecord): Promise<boolean> {
  const { rowCount } = await db.pool.query(
    `INSERT INTO webhook_deliveries (id, event, action, status, installation_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
    [delivery.id, delivery.event, delivery.action, delivery.status, delivery.installationId],
  );
  return rowCount === 1;
}

/** Forgets a delivery whose handling failed, so that a redelivery is handled in full. */
export async function forgetDelivery(db: Db, id: string): Promise<void> {
  await db.pool.query(`DELETE FROM webhook_deliveries WHERE id = $1`, [id]);
}
