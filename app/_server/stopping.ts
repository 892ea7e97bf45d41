import { processStopping } from "../../lib/http/draining";

/**
 * The web process is stopping (SIGTERM, SIGINT): its live streams end, so that Next.js's own
 * shutdown, which waits for every open response before the process exits, can finish. A
 * dashboard left open kept a server-sent events stream, and with it the web process, alive
 * until it was killed. The browser's EventSource reconnects by itself, to the next process.
 */
/**
 * The signal a live stream ends on: its reader went away, or the process is stopping. (Not
 * AbortSignal.any: the process's signal lives as long as the process, and each stream's
 * listener on it is removed when the stream's request ends.)
 */
export function streamSignal(request: Request): AbortSignal {
  const stream = new AbortController();
  const stopping = processStopping();
  const end = () => stream.abort();
  if (stopping.aborted || request.signal.aborted) end();
  stopping.addEventListener("abort", end, { once: true });
  request.signal.addEventListener(
    "abort",
    () => {
      stopping.removeEventListener("abort", end);
      end();
    },
    { once: true },
  );
  return stream.signal;
}
