import type { Db } from "../kernel/db";
import { query, sql } from "../kernel/sql";

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
  const { rowCount } = await query(
    db.pool,
    sql`INSERT INTO webhook_deliveries (id, event, action, status, installation_id)
        VALUES (${delivery.id}, ${delivery.event}, ${delivery.action}, ${delivery.status}, ${delivery.installationId}) ON CONFLICT (id) DO NOTHING`,
  );
  return rowCount === 1;
}

/** Forgets a delivery whose handling failed, so that a redelivery is handled in full. */
export async function forgetDelivery(db: Db, id: string): Promise<void> {
  await query(db.pool, sql`DELETE FROM webhook_deliveries WHERE id = ${id}`);
}
