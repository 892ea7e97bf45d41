import { createLog } from "../../lib/github/log";
import { announceSetup } from "../../lib/setup/announce-setup";
import { publicUrl } from "../../lib/setup/public-url";
import { db } from "./db";
import { webhookReceiver } from "./webhook-receiver";

const log = createLog("atelier.web");

/**
 * What the web process does once, as it starts (instrumentation.ts): says where to register
 * the GitHub App when it has none (with the one-time setup token), and builds the webhook
 * receiver, so that the first delivery does not pay for it.
 */
export async function startWebProcess(): Promise<void> {
  try {
    // with no App there is nothing to receive webhooks for yet
    if (await announceSetup(db(), publicUrl(), (line) => console.error(line))) return;
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err) }, "no setup token could be made at start (is Postgres reachable?); restart the web process to get one");
  }
  try {
    await webhookReceiver();
    log.info("the webhook receiver is ready");
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err) }, "the webhook receiver could not be built at start; the first delivery tries again");
  }
}
