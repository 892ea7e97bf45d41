import { UnavailableError } from "../errors";

/**
 * The web process is stopping (SIGTERM, SIGINT). Next.js's shutdown stops accepting
 * connections and waits for the open ones; a request that still arrives on one (a keep-alive
 * connection, a request a load balancer sent before it saw /readyz fail) is answered 503
 * `server_draining` with Retry-After, so its client sends it again to the next process; the
 * live streams end (app/_server/stopping.ts).
 */

/** How long a client waits before it sends the request again (to another process). */
export const DRAINING_RETRY_AFTER_SECONDS = 5;

let stopped: AbortController | undefined;

/** Aborted once the process is told to stop; the signals are listened to from the first call. */
export function processStopping(): AbortSignal {
  if (!stopped) {
    const controller = (stopped = new AbortController());
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => controller.abort());
  }
  return stopped.signal;
}

/** Whether the process is draining. */
export const isDraining = (): boolean => processStopping().aborted;

/** The answer of a request that arrives while the process drains. */
export function drainingError(): UnavailableError {
  return new UnavailableError("server_draining", "This Atelier web process is stopping; send the request again shortly (another process answers it).", DRAINING_RETRY_AFTER_SECONDS);
}
