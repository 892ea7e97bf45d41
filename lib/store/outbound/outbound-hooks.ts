import type { Db } from "../kernel/db";
import type { OutboundHook } from "../generated/client";

/**
 * Outbound targets (`outbound_hooks`): a signed webhook or a Slack incoming webhook, per
 * instance (installation, repo and loop null), per installation (repo and loop null) or per
 * Loop of one repository. Which hooks a terminal state is delivered to is decided in the
 * state's own transaction (terminal-deliveries.ts).
 */
export interface OutboundHookRecord {
  id: number;
  installationId: number | null;
  repo: string | null;
  loop: string | null;
  url: string;
  secret: string;
  kind: "webhook" | "slack";
  /** the notices it is subscribed to (lib/outbound/notices.ts) */
  events: string[];
  createdAt: Date;
}

const recordOf = (h: OutboundHook): OutboundHookRecord => ({
  id: Number(h.id),
  installationId: h.installationId === null ? null : Number(h.installationId),
  repo: h.repo,
  loop: h.loop,
  url: h.url,
  secret: h.secret,
  kind: h.kind === "slack" ? "slack" : "webhook",
  events: h.events,
  createdAt: h.createdAt,
});

export async function insertOutboundHook(db: Db, hook: Pick<OutboundHookRecord, "installationId" | "repo" | "loop" | "url" | "secret" | "kind" | "events">): Promise<OutboundHookRecord> {
  return recordOf(await db.prisma.outboundHook.create({ data: hook }));
}

export async function findOutboundHook(db: Db, id: number): Promise<OutboundHookRecord | null> {
  const hook = await db.prisma.outboundHook.findUnique({ where: { id } });
  return hook && recordOf(hook);
}

/**
 * The installation hooks of `installationIds` and the Loop hooks of `repos` (lower-cased
 * owner/name); every hook when both are null. Newest first.
 */
export async function listOutboundHooks(db: Db, scope: { installationIds: number[] | null; repos: string[] | null }): Promise<OutboundHookRecord[]> {
  const all = scope.installationIds === null && scope.repos === null;
  const hooks = await db.prisma.outboundHook.findMany({
    where: all ? {} : { OR: [{ repo: null, installationId: { in: scope.installationIds ?? [] } }, { repo: { in: scope.repos ?? [] } }] },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  return hooks.map(recordOf);
}

/** Sets a hook's URL, secret and notices, each when given (null keeps it); null when there is no such hook. */
export async function updateOutboundHook(db: Db, id: number, change: { url: string | null; secret: string | null; events: string[] | null }): Promise<OutboundHookRecord | null> {
  const [hook] = await db.prisma.outboundHook.updateManyAndReturn({
    where: { id },
    data: { url: change.url ?? undefined, secret: change.secret ?? undefined, events: change.events ?? undefined },
  });
  return hook ? recordOf(hook) : null;
}

/** Deletes a hook; false when there was none. Its deliveries stay (the log keeps them). */
export async function deleteOutboundHook(db: Db, id: number): Promise<boolean> {
  return (await db.prisma.outboundHook.deleteMany({ where: { id } })).count > 0;
}
