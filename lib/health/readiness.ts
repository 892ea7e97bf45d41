import type { Redis } from "ioredis";
import { WORKER_STALE_AFTER_MS } from "../runner/worker-heartbeat";
import type { Db } from "../store/kernel/db";
import { pingDatabase } from "../store/kernel/ping-database";
import { liveWorkers } from "../store/runs/worker-registry";

/**
 * Liveness and readiness of a process, as /healthz and /readyz answer them (the web's routes
 * and the worker's health port share this module). Alive: the process answers. Ready: Postgres
 * and Redis answer within CHECK_TIMEOUT_MS and, for the web process, at least one worker is
 * alive in the registry — without one, Runs open but nothing runs them.
 */

export const CHECK_TIMEOUT_MS = 2_000;

export interface Check {
  ok: boolean;
  ms: number;
  /** What failed, in words (never a connection string). */
  error?: string;
  /** The live workers, for the workers check. */
  live?: number;
}

export interface Readiness {
  status: "ready" | "not_ready";
  checks: Record<string, Check>;
}

export interface ReadinessDeps {
  db: Db;
  redis: Pick<Redis, "ping">;
  /** The web process asks for a live worker; the worker itself does not. */
  requireWorker: boolean;
  timeoutMs?: number;
}

/** A promise that gives up after `ms`: a check never waits for a database that does not answer. */
function within<T>(ms: number, work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** What a failed check says: the error's code or first line, never its whole text (it may quote a URL). */
function reason(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "string" && code) return code;
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n")[0]!.replace(/\w+:\/\/\S+/g, "<url>").slice(0, 200);
}

async function check(run: () => Promise<Omit<Check, "ms">>): Promise<Check> {
  const t0 = performance.now();
  try {
    return { ...(await run()), ms: Math.round(performance.now() - t0) };
  } catch (err) {
    return { ok: false, ms: Math.round(performance.now() - t0), error: reason(err) };
  }
}

export function isReady(readiness: Readiness): boolean {
  return readiness.status === "ready";
}

export async function readiness(deps: ReadinessDeps): Promise<Readiness> {
  const ms = deps.timeoutMs ?? CHECK_TIMEOUT_MS;
  const checks: Record<string, Promise<Check>> = {
    postgres: check(async () => {
      await within(ms, pingDatabase(deps.db), "Postgres");
      return { ok: true };
    }),
    redis: check(async () => {
      await within(ms, deps.redis.ping(), "Redis");
      return { ok: true };
    }),
  };
  if (deps.requireWorker) {
    checks.workers = check(async () => {
      const live = (await within(ms, liveWorkers(deps.db, WORKER_STALE_AFTER_MS), "Postgres")).length;
      return live > 0 ? { ok: true, live } : { ok: false, live, error: "no worker is alive (none heartbeated within the lease TTL)" };
    });
  }
  const settled = Object.fromEntries(await Promise.all(Object.entries(checks).map(async ([name, c]) => [name, await c] as const)));
  return { status: Object.values(settled).every((c) => c.ok) ? "ready" : "not_ready", checks: settled };
}

/** The status code of a readiness answer: 200 ready, 503 not. */
export const readinessStatus = (r: Readiness): number => (isReady(r) ? 200 : 503);

/** /healthz: the process is alive (it answered). */
export const liveness = (version: string) => ({ status: "alive" as const, version, uptimeSeconds: Math.round(process.uptime()) });
