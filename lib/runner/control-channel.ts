import type { Redis } from "ioredis";
import type { RedisNames } from "./redis-names";

/**
 * Operator actions that must reach the worker running an Attempt, wherever it runs: a cancel
 * stops its agent, an intervention is written to its agent's stdin. Every worker subscribes;
 * the one holding the Attempt acts, the others ignore the message. A message is a nudge, never
 * a command: the worker acts only on what Postgres says (the Attempt row is Canceled; the
 * intervention is the audit log's row, with its author), so anyone who can publish on Redis
 * can stop or steer nothing. Pub/sub is fire-and-forget: a worker that misses a cancel still
 * notices it (the Attempt row says Canceled) within a third of the lease TTL.
 */

export interface CancelMessage {
  runId: string;
  attemptId: string | null;
}

export interface InterveneMessage {
  runId: string;
  /** The audit log row that holds the intervention. */
  auditId: string;
}

/** Returns how many workers heard it. */
export function publishCancel(redis: Redis, names: RedisNames, msg: CancelMessage): Promise<number> {
  return redis.publish(names.cancelChannel, JSON.stringify(msg));
}

/** Returns how many workers heard it. */
export function publishIntervention(redis: Redis, names: RedisNames, msg: InterveneMessage): Promise<number> {
  return redis.publish(names.interveneChannel, JSON.stringify(msg));
}

export interface ControlHandlers {
  cancel(msg: CancelMessage): void;
  intervene(msg: InterveneMessage): void;
}

export interface ControlSubscription {
  close(): Promise<void>;
}

function parse<T>(raw: string, keys: (keyof T)[]): T | null {
  try {
    const value = JSON.parse(raw) as T;
    return value && typeof value === "object" && keys.every((k) => typeof value[k] === "string") ? value : null;
  } catch {
    return null;
  }
}

/** Subscribes on a connection of its own (a subscriber connection can do nothing else). */
export async function subscribeControl(redis: Redis, names: RedisNames, handlers: ControlHandlers): Promise<ControlSubscription> {
  const sub = redis.duplicate();
  sub.on("error", () => undefined); // it reconnects by itself
  sub.on("message", (channel: string, raw: string) => {
    if (channel === names.cancelChannel) {
      const msg = parse<CancelMessage>(raw, ["runId"]);
      if (msg) handlers.cancel(msg);
    } else if (channel === names.interveneChannel) {
      const msg = parse<InterveneMessage>(raw, ["runId", "auditId"]);
      if (msg) handlers.intervene(msg);
    }
  });
  await sub.subscribe(names.cancelChannel, names.interveneChannel);
  return {
    async close() {
      await sub.quit().catch(() => sub.disconnect());
    },
  };
}
