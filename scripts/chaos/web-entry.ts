// The web process of `npm run chaos`: the webhook receiver as the Next route wires it (verify,
// log the delivery, hand a Hint on), on its own port, without the dashboard (a Next build takes
// minutes). Configured by the environment the worker reads too; CHAOS_WEB_PORT picks the port.
import { createServer } from "node:http";
import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { loadInstanceConfig } from "../../lib/config/roster";
import { createLog } from "../../lib/github/log";
import { nodeWebhookHandler } from "../../lib/github/node-webhook-handler";
import { receiveWebhook } from "../../lib/github/receive-webhook";
import { createWiring } from "../../lib/instance/wiring";
import { atelierApp } from "../../probot.config";

const log = createLog("atelier.webhooks");
const instance = await loadInstanceConfig();
const wiring = createWiring({
  log,
  roster: async () => instance,
  failFast: true,
  workQueue: ({ db, roster }) => new BullWorkQueue({ connection: bullConnection(undefined, { failFast: true }), db, pollIntervalSeconds: roster.pollIntervalSeconds }),
});
const { db } = wiring;
const [github, workQueue] = await Promise.all([wiring.github(), wiring.workQueue()]);
await github.probot.load(atelierApp({ db, workQueue, log, onCheckRunAction: async () => ({ tag: "Ignored", reason: "not_an_action" }), onDashboardIssue: async () => null }));
const server = createServer(nodeWebhookHandler((request) => receiveWebhook({ db, probot: github.probot, secret: github.settings.webhookSecret, log }, request), log));
server.listen(Number(process.env.CHAOS_WEB_PORT), "127.0.0.1", () => process.stdout.write("web ready\n"));
