import { instanceConfig } from "../auth/instance-config";
import type { Viewer } from "../auth/viewer";
import type { Db } from "../store/kernel/db";
import { liveInstallations } from "../store/github/registrations";
import { hookScope, requireHookCreator, requireHookManager } from "./hook-managers";
import { deliveryNotFound, getDelivery, listDeliveries, redeliverNow, type DeliveryView } from "./delivery-log";
import { createHook, deleteHook, getHook, listHooks, updateHook, webhookNotFound, type HookInput, type HookUpdate, type HookView } from "./hooks";
import type { TargetPolicy } from "../http/resolver";
import { targetPolicyFor } from "./target-policy";
import { sendTestDelivery } from "./test-delivery";

/**
 * The outbound API's services, each authorized for the viewer (lib/outbound/hook-managers.ts) and
 * checked against the instance's target policy. Routes only parse and call one of these.
 */

/** The instance's webhook target policy (allow_private_webhook_targets, or the env switch). */
export async function instanceTargetPolicy(): Promise<TargetPolicy> {
  return targetPolicyFor(await instanceConfig().catch(() => null));
}

export async function listHooksFor(db: Db, viewer: Viewer | null): Promise<{ hooks: HookView[] }> {
  return { hooks: await listHooks(db, await hookScope(db, viewer)) };
}

export async function getHookFor(db: Db, viewer: Viewer | null, id: number): Promise<HookView> {
  const hook = await getHook(db, id);
  await requireHookManager(viewer, hook.owner, { unseen: webhookNotFound(id) });
  return hook;
}

export async function createHookFor(db: Db, viewer: Viewer | null, input: HookInput): Promise<{ hook: HookView; secret: string }> {
  await requireHookCreator(viewer, input);
  return createHook(db, input, await instanceTargetPolicy());
}

export async function updateHookFor(db: Db, viewer: Viewer | null, id: number, update: HookUpdate): Promise<{ hook: HookView; secret: string | null }> {
  await requireHookManager(viewer, (await getHook(db, id)).owner, { write: true, unseen: webhookNotFound(id) });
  return updateHook(db, id, update, await instanceTargetPolicy());
}

export async function deleteHookFor(db: Db, viewer: Viewer | null, id: number): Promise<{ deleted: number }> {
  await requireHookManager(viewer, (await getHook(db, id)).owner, { write: true, unseen: webhookNotFound(id) });
  await deleteHook(db, id);
  return { deleted: id };
}

export async function listDeliveriesFor(
  db: Db,
  viewer: Viewer | null,
  q: { hookId?: number; runId?: string; limit?: number } = {},
): Promise<{ deliveries: DeliveryView[] }> {
  return { deliveries: await listDeliveries(db, { ...(await hookScope(db, viewer)), ...q }) };
}

/** Redelivers now (the web process makes the try; a failure goes on with the worker's backoff). */
export async function redeliverFor(db: Db, viewer: Viewer | null, id: number) {
  const delivery = await getDelivery(db, id);
  const owner =
    delivery.hookRepo && delivery.hookLoop
      ? { kind: "loop" as const, installationId: delivery.installationId ?? 0, repo: delivery.hookRepo, loop: delivery.hookLoop }
      : { kind: "installation" as const, installationId: delivery.installationId ?? 0 };
  await requireHookManager(viewer, owner, { write: true, unseen: deliveryNotFound(id) });
  return redeliverNow({ db, policy: await instanceTargetPolicy() }, id);
}

/** The test-delivery button: a test notice sent now (the web process makes the try), kept in the log. */
export async function testDeliveryFor(db: Db, viewer: Viewer | null, id: number, publicUrl: string) {
  const hook = await getHook(db, id);
  await requireHookManager(viewer, hook.owner, { write: true, unseen: webhookNotFound(id) });
  return sendTestDelivery({ db, policy: await instanceTargetPolicy() }, hook, publicUrl);
}

/** The delivery log page's read: the viewer's hooks, their deliveries, and where an admin may add one. */
export async function deliveryLogFor(db: Db, viewer: Viewer | null) {
  const [{ hooks }, { deliveries }] = await Promise.all([listHooksFor(db, viewer), listDeliveriesFor(db, viewer, { limit: 200 })]);
  const installations = viewer?.admin ? await liveInstallations(db) : [];
  return { hooks, deliveries, installations, admin: viewer?.admin === true };
}
