import type { WebhookDispatcher } from "./webhooks";

/** How often the receiver is asked whether it listens yet. */
export const RECEIVER_PROBE_MS = 100;

/**
 * Under `npm start` the simulator starts before the dashboard that receives its webhooks (the
 * dashboard reads the App the simulator writes). Its first deliveries (the demo world's
 * installation, labels, issues) would meet a closed port: "fetch failed", red in the log. So
 * deliveries are held, queued in order, until the receiver answers any HTTP request at all,
 * then go out as usual; a receiver that answers badly later still fails its delivery, as on
 * GitHub. Returns a function that stops waiting (the simulator's close).
 */
export function holdUntilReceiverListens(webhooks: WebhookDispatcher, url: () => string | null, probeMs = RECEIVER_PROBE_MS): () => void {
  webhooks.pause();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const probe = async (): Promise<void> => {
    timer = null;
    const target = url();
    const listens = target !== null && (await fetch(target, { method: "HEAD", signal: AbortSignal.timeout(5_000) }).then(() => true, () => false));
    if (stopped) return;
    if (listens) webhooks.resume();
    else timer = setTimeout(() => void probe(), probeMs);
  };
  void probe();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
