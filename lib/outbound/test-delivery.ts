import { randomUUID } from "node:crypto";
import type { Db } from "../store/kernel/db";
import { insertNoticeDeliveries } from "../store/outbound/notice-rows";
import { attemptDelivery, type DeliveryDeps, type DeliveryOutcome } from "./attempt-delivery";
import { getDelivery, type DeliveryView } from "./delivery-log";
import type { HookView } from "./hooks";
import { testPayload } from "./notices";

/**
 * The test-delivery button: a notice about nothing, written as a delivery of its own (the log
 * keeps it, a failure is retried like any other) and tried at once, here, through the same
 * guard and the same request as a real notice — a Slack target gets its Block Kit message.
 */
export async function sendTestDelivery(
  deps: DeliveryDeps & { db: Db },
  hook: HookView,
  publicUrl: string,
): Promise<{ delivery: DeliveryView; outcome: DeliveryOutcome }> {
  const subject = `test:${randomUUID()}`;
  const installationId = hook.owner.kind === "instance" ? null : hook.owner.installationId;
  const [id] = await insertNoticeDeliveries(deps.db, [{ hookId: hook.id, runId: null, subject, payload: testPayload(subject, publicUrl, installationId) }]);
  const outcome = await attemptDelivery(deps, id!);
  return { delivery: await getDelivery(deps.db, id!), outcome };
}
