import { numericIdParam } from "../http/url-ids";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { BadInputError, NotFoundError } from "../errors";
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
import { NOTICE_KINDS, noticeKinds, type NoticeKind } from "./notices";

/**
 * Outbound targets: a signed webhook, or a Slack incoming webhook (ADR 0087), per instance
 * (every Run), per installation (every Run of its repositories) or per Loop (one Loop of one
 * repository), each subscribed to notices (lib/outbound/notices.ts); a webhook also hears of
 * every terminal state. A webhook's secret is shown once, when it is made; afterwards only its
 * last four characters. A Slack URL is its own credential: shown whole only to whoever typed
 * it, masked afterwards. Who may touch which hook is the route's question (admins for the
 * instance's and an installation's; a repository's admins for its Loops').
 */

export type HookOwner =
  | { kind: "instance" }
  | { kind: "installation"; installationId: number }
  | { kind: "loop"; installationId: number; repo: string; loop: string };

export type TargetKind = "webhook" | "slack";

export interface HookView {
  id: number;
  owner: HookOwner;
  kind: TargetKind;
  /** a Slack target's URL masked (its path is its credential) */
  url: string;
  /** the notices it is subscribed to */
  events: NoticeKind[];
  /** the secret's last four characters (empty for a Slack target) */
  secretHint: string;
  createdAt: Date;
}

const secretSchema = z
  .string()
  .min(16, "a secret is at least 16 characters")
  .max(256, "a secret is at most 256 characters");

/** What every target's body may say besides its owner. */
const targetFields = {
  url: z.string().max(MAX_URL_LENGTH),
  secret: secretSchema.optional(),
  /** webhook (default) or slack */
  kind: z.enum(["webhook", "slack"]).optional(),
  events: noticeKinds.optional(),
};

/** The body of POST /api/v1/outbound/hooks: the instance's target, an installation's, or a Loop's. */
export const hookInput = z.union([
  z.strictObject({ instance: z.literal(true), ...targetFields }),
  z.strictObject({ installation_id: z.number().int().positive(), ...targetFields }),
  z.strictObject({
    repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, "repo is owner/name"),
    loop: z.string().min(1).max(100),
    ...targetFields,
  }),
]);
export type HookInput = z.infer<typeof hookInput>;

export const hookUpdate = z.strictObject({
  url: z.string().max(MAX_URL_LENGTH).optional(),
  secret: secretSchema.optional(),
  /** true: make a new secret (returned once) */
  rotate_secret: z.boolean().optional(),
  events: noticeKinds.optional(),
});
export type HookUpdate = z.infer<typeof hookUpdate>;

/** A hook's or a delivery's id from a route parameter. */
export function idParam(text: string, what: "webhook" | "delivery"): number {
  return numericIdParam(text, what);
}

export const newSecret = (): string => randomBytes(32).toString("hex");

/** Who owns a stored target. */
export function ownerOf(r: Pick<OutboundHookRecord, "installationId" | "repo" | "loop">): HookOwner {
  if (r.repo && r.loop) return { kind: "loop", installationId: r.installationId ?? 0, repo: r.repo, loop: r.loop };
  return r.installationId === null ? { kind: "instance" } : { kind: "installation", installationId: r.installationId };
}

/** A Slack URL as lists show it: its host and the last four characters of its path. */
export const maskedSlackUrl = (url: string): string => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}/…${u.pathname.slice(-4)}`;
};

function toView(r: OutboundHookRecord): HookView {
  return {
    id: r.id,
    owner: ownerOf(r),
    kind: r.kind,
    url: r.kind === "slack" ? maskedSlackUrl(r.url) : r.url,
    events: r.events.filter((e): e is NoticeKind => (NOTICE_KINDS as readonly string[]).includes(e)),
    secretHint: r.kind === "slack" ? "" : r.secret.slice(-4),
    createdAt: r.createdAt,
  };
}

/**
 * Where a new hook would belong, checked against the registered installations and
 * repositories (NotFoundError otherwise); asked once the creator is authorized
 * (access.ts requireHookCreator), so only those who can see a repository learn whether it is.
 */
async function hookOwnerOf(db: Db, input: HookInput): Promise<HookOwner> {
  if ("instance" in input) return { kind: "instance" };
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

/**
 * Subscribes a URL (checked against the target policy now); returns the hook and its secret,
 * once (a Slack target has none: BadInputError `slack_target_secret` when one is given).
 */
export async function createHook(db: Db, input: HookInput, policy: TargetPolicy): Promise<{ hook: HookView; secret: string }> {
  const kind = input.kind ?? "webhook";
  if (kind === "slack" && input.secret !== undefined) {
    throw new BadInputError("slack_target_secret", "A Slack target has no secret: its incoming-webhook URL is its credential.");
  }
  const owner = await hookOwnerOf(db, input);
  const url = await assertWebhookTarget(input.url, policy);
  const secret = kind === "slack" ? "" : (input.secret ?? newSecret());
  const hook = await insertOutboundHook(db, {
    installationId: owner.kind === "instance" ? null : owner.installationId,
    repo: owner.kind === "loop" ? owner.repo : null,
    loop: owner.kind === "loop" ? owner.loop : null,
    url: url.toString(),
    secret,
    kind,
    events: [...new Set(input.events ?? [])],
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
  const before = await findOutboundHook(db, id);
  if (!before) throw webhookNotFound(id);
  if (before.kind === "slack" && (update.secret !== undefined || update.rotate_secret)) {
    throw new BadInputError("slack_target_secret", "A Slack target has no secret: its incoming-webhook URL is its credential.");
  }
  const url = update.url === undefined ? null : (await assertWebhookTarget(update.url, policy)).toString();
  const secret = update.rotate_secret ? newSecret() : (update.secret ?? null);
  const hook = await updateOutboundHook(db, id, { url, secret, events: update.events ? [...new Set(update.events)] : null });
  if (!hook) throw webhookNotFound(id);
  return { hook: toView(hook), secret };
}

/** Deletes a hook; its pending deliveries then give up at their next try (the log keeps them). */
export async function deleteHook(db: Db, id: number): Promise<void> {
  if (!(await deleteOutboundHook(db, id))) throw webhookNotFound(id);
}
