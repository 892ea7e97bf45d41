import { numericIdParam } from "../http/url-ids";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { NotFoundError } from "../errors";
import type { Db } from "../store/kernel/db";
import {
  deleteOutboundHook,
  findOutboundHook,
  insertOutboundHook,
  listOutboundHooks,
  updateOutboundHook,
  type OutboundHookRecord,
} from "../store/outbound/outbound-hooks";
import { isInstallationRegistered, registeredRepository } from "../store/github/registrations";
import type { TargetPolicy } from "../http/resolver";
import { assertWebhookTarget, MAX_URL_LENGTH } from "./target-policy";

/**
 * Outbound webhook subscriptions: per installation (every Run of its repositories) or per Loop
 * (one Loop of one repository). The secret is shown once, when it is made; afterwards only its
 * last four characters. Who may touch which hook is the route's question (admins for an
 * installation's hooks; a repository's admins for its Loops' hooks).
 */

export type HookOwner = { kind: "installation"; installationId: number } | { kind: "loop"; installationId: number; repo: string; loop: string };

export interface HookView {
  id: number;
  owner: HookOwner;
  url: string;
  /** the secret's last four characters */
  secretHint: string;
  createdAt: Date;
}

const secretSchema = z
  .string()
  .min(16, "a secret is at least 16 characters")
  .max(256, "a secret is at most 256 characters");

/** The body of POST /api/v1/outbound/hooks: an installation's hook, or a Loop's. */
export const hookInput = z.union([
  z.strictObject({
    installation_id: z.number().int().positive(),
    url: z.string().max(MAX_URL_LENGTH),
    secret: secretSchema.optional(),
  }),
  z.strictObject({
    repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, "repo is owner/name"),
    loop: z.string().min(1).max(100),
    url: z.string().max(MAX_URL_LENGTH),
    secret: secretSchema.optional(),
  }),
]);
export type HookInput = z.infer<typeof hookInput>;

export const hookUpdate = z.strictObject({
  url: z.string().max(MAX_URL_LENGTH).optional(),
  secret: secretSchema.optional(),
  /** true: make a new secret (returned once) */
  rotate_secret: z.boolean().optional(),
});
export type HookUpdate = z.infer<typeof hookUpdate>;

/** A hook's or a delivery's id from a route parameter. */
export function idParam(text: string, what: "webhook" | "delivery"): number {
  return numericIdParam(text, what);
}

export const newSecret = (): string => randomBytes(32).toString("hex");

function toView(r: OutboundHookRecord): HookView {
  const owner: HookOwner =
    r.repo && r.loop
      ? { kind: "loop", installationId: r.installationId ?? 0, repo: r.repo, loop: r.loop }
      : { kind: "installation", installationId: r.installationId ?? 0 };
  return { id: r.id, owner, url: r.url, secretHint: r.secret.slice(-4), createdAt: r.createdAt };
}

/**
 * Where a new hook would belong, checked against the registered installations and
 * repositories (NotFoundError otherwise); asked once the creator is authorized
 * (access.ts requireHookCreator), so only those who can see a repository learn whether it is.
 */
async function hookOwnerOf(db: Db, input: HookInput): Promise<HookOwner> {
  if ("installation_id" in input) {
    if (!(await isInstallationRegistered(db, input.installation_id))) {
      throw new NotFoundError("installation_not_found", `No installation ${input.installation_id} is registered.`);
    }
    return { kind: "installation", installationId: input.installation_id };
  }
  const repo = input.repo.toLowerCase();
  const registered = await registeredRepository(db, repo);
  if (!registered) throw new NotFoundError("repository_not_found", `The repository ${input.repo} is not registered with Atelier.`);
  return { kind: "loop", installationId: registered.installation_id, repo, loop: input.loop };
}

/** Subscribes a URL (checked against the target policy now); returns the hook and its secret, once. */
export async function createHook(db: Db, input: HookInput, policy: TargetPolicy): Promise<{ hook: HookView; secret: string }> {
  const owner = await hookOwnerOf(db, input);
  const url = await assertWebhookTarget(input.url, policy);
  const secret = input.secret ?? newSecret();
  const hook = await insertOutboundHook(db, {
    installationId: owner.installationId,
    repo: owner.kind === "loop" ? owner.repo : null,
    loop: owner.kind === "loop" ? owner.loop : null,
    url: url.toString(),
    secret,
  });
  return { hook: toView(hook), secret };
}

/** What a hook that does not exist, or that the viewer may not know of, answers. */
export const webhookNotFound = (id: number): NotFoundError => new NotFoundError("webhook_not_found", `No webhook ${id}.`);

export async function getHook(db: Db, id: number): Promise<HookView> {
  const hook = await findOutboundHook(db, id);
  if (!hook) throw webhookNotFound(id);
  return toView(hook);
}

/** The hooks of the given installations and repositories (null = all), newest first. */
export async function listHooks(db: Db, scope: { installationIds?: number[] | null; repos?: string[] | null } = {}): Promise<HookView[]> {
  const hooks = await listOutboundHooks(db, {
    installationIds: scope.installationIds ?? null,
    repos: scope.repos ? scope.repos.map((r) => r.toLowerCase()) : null,
  });
  return hooks.map(toView);
}

/** Changes a hook's URL (checked again) or secret; a new secret is returned once. */
export async function updateHook(
  db: Db,
  id: number,
  update: HookUpdate,
  policy: TargetPolicy,
): Promise<{ hook: HookView; secret: string | null }> {
  const url = update.url === undefined ? null : (await assertWebhookTarget(update.url, policy)).toString();
  const secret = update.rotate_secret ? newSecret() : (update.secret ?? null);
  const hook = await updateOutboundHook(db, id, { url, secret });
  if (!hook) throw webhookNotFound(id);
  return { hook: toView(hook), secret };
}

/** Deletes a hook; its pending deliveries then give up at their next try (the log keeps them). */
export async function deleteHook(db: Db, id: number): Promise<void> {
  if (!(await deleteOutboundHook(db, id))) throw webhookNotFound(id);
}
