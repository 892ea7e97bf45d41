import { createLog } from "../../lib/github/log";
import { receiveWebhook, type WebhookReceiverDeps, type WebhookRequest } from "../../lib/github/receive-webhook";
import { handleCheckRunEvent, type CheckRunEventPayload } from "../../lib/mirror/check-run-actions";
import { onDashboardIssueEvent } from "../../lib/notify/dashboard-issue";
import { atelierApp, type AtelierAppDeps } from "../../probot.config";
import { dashboardContext } from "./services";
import { webWiring } from "./wiring";

export type Receiver = {
  receive: (request: WebhookRequest) => ReturnType<typeof receiveWebhook>;
  /** The App's webhook secret, for the signature checked while the body streams in. */
  secret: WebhookReceiverDeps["secret"];
};

async function createReceiver(): Promise<Receiver> {
  const wiring = webWiring();
  const { db } = wiring;
  const log = createLog("atelier.webhooks");
  const [github, workQueue] = await Promise.all([wiring.github(), wiring.workQueue()]);
  // the check-run buttons act through the dashboard's own operator (one for every door: the
  // admission gate, the `if:` re-check, the roster's allow:)
  const operator = dashboardContext().services;
  const onCheckRunAction = (payload: CheckRunEventPayload, deliveryId: string) => handleCheckRunEvent({ ...wiring.mirror, operator }, payload, deliveryId);
  // a tick on a dashboard issue acts through the same operator
  const onDashboardIssue: AtelierAppDeps["onDashboardIssue"] = (event, payload, deliveryId) =>
    onDashboardIssueEvent({ ...wiring.mirror, actions: operator }, event, payload, deliveryId);
  await github.probot.load(atelierApp({ db, workQueue, log, onCheckRunAction, onDashboardIssue }));
  const secret = github.settings.webhookSecret;
  return { receive: (request) => receiveWebhook({ db, probot: github.probot, secret, log }, request), secret };
}

// Next.js bundles the instrumentation hook and each route apart, each with its own copy of this
// module: the one receiver of the process lives on globalThis, so the one built at start is
// the one the route uses.
const SLOT = Symbol.for("atelier.webhookReceiver");
type Slot = { [SLOT]?: Promise<Receiver> | undefined };

/** The web process's webhook receiver: built once (at start, by instrumentation.ts), rebuilt after a failure. */
export function webhookReceiver(): Promise<Receiver> {
  const slot = globalThis as Slot;
  const built = (slot[SLOT] ??= createReceiver());
  built.catch(() => {
    if (slot[SLOT] === built) slot[SLOT] = undefined;
  });
  return built;
}
