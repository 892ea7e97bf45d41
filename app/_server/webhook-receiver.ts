import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { instanceConfig } from "../../lib/auth/instance-config";
import { loadGitHubAppSettings } from "../../lib/config/github-app";
import { createRedis, instanceKeyPrefix } from "../../lib/config/redis";
import { createGitHubApp } from "../../lib/github/app";
import { createLog } from "../../lib/github/log";
import { redisRateBlocks } from "../../lib/github/redis-rate-blocks";
import { receiveWebhook, type WebhookReceiverDeps, type WebhookRequest } from "../../lib/github/receive-webhook";
import { handleCheckRunEvent, type CheckRunEventPayload } from "../../lib/mirror/check-run-actions";
import { atelierApp } from "../../probot.config";
import { db as webDb } from "./db";
import { dashboardContext } from "./services";

export type Receiver = {
  receive: (request: WebhookRequest) => ReturnType<typeof receiveWebhook>;
  /** The App's webhook secret, for the signature checked while the body streams in. */
  secret: WebhookReceiverDeps["secret"];
};

async function createReceiver(): Promise<Receiver> {
  const db = webDb();
  const log = createLog("atelier.webhooks");
  const settings = await loadGitHubAppSettings({ db });
  const instance = await instanceConfig();
  const redis = createRedis(undefined, { failFast: true });
  const keyPrefix = instanceKeyPrefix();
  const github = createGitHubApp(settings, { log, sharedRateBlocks: redisRateBlocks(redis, keyPrefix) });
  const workQueue = new BullWorkQueue({ connection: bullConnection(undefined, { failFast: true }), db, pollIntervalSeconds: instance.pollIntervalSeconds });
  // the check-run buttons act through the dashboard's own operator (one for every door: the
  // admission gate, the `if:` re-check, the roster's allow:)
  const operator = dashboardContext().services;
  const publicUrl = process.env.ATELIER_PUBLIC_URL ?? new URL("/", process.env.AUTH_URL ?? "http://localhost:3000").origin;
  const onCheckRunAction = (payload: CheckRunEventPayload, deliveryId: string) =>
    handleCheckRunEvent({ db, github: async (id) => github.installationOctokit(id), publicUrl, operator }, payload, deliveryId);
  await github.probot.load(atelierApp({ db, workQueue, log, onCheckRunAction }));
  return { receive: (request) => receiveWebhook({ db, probot: github.probot, secret: settings.webhookSecret, log }, request), secret: settings.webhookSecret };
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
