// The web process of `npm run chaos`: the webhook receiver as the Next route wires it (verify,
// log the delivery, hand a Hint on), on its own port, without the dashboard (a Next build takes
// minutes). Configured by the environment the worker reads too; CHAOS_WEB_PORT picks the port.
import { createServer } from "node:http";
import { BullWorkQueue, bullConnection } from "../../jobs/queues";
import { loadGitHubAppSettings } from "../../lib/config/github-app";
import { createRedis, instanceKeyPrefix } from "../../lib/config/redis";
import { loadInstanceConfig } from "../../lib/config/roster";
import { createGitHubApp } from "../../lib/github/app";
import { createLog } from "../../lib/github/log";
import { nodeWebhookHandler } from "../../lib/github/node-webhook-handler";
import { receiveWebhook } from "../../lib/github/receive-webhook";
import { redisRateBlocks } from "../../lib/github/redis-rate-blocks";
import { getDb } from "../../lib/store/db";
import { atelierApp } from "../../probot.config";

const log = createLog("atelier.webhooks");
const db = getDb();
const instance = await loadInstanceConfig();
const settings = await loadGitHubAppSettings({ db });
const redis = createRedis(undefined, { failFast: true });
const github = createGitHubApp(settings, { log, sharedRateBlocks: redisRateBlocks(redis, instanceKeyPrefix()) });
const workQueue = new BullWorkQueue({ connection: bullConnection(undefined, { failFast: true }), db, pollIntervalSeconds: instance.pollIntervalSeconds });
await github.probot.load(atelierApp({ db, workQueue, log, onCheckRunAction: async () => ({ tag: "Ignored", reason: "not_an_action" }) }));
const server = createServer(nodeWebhookHandler((request) => receiveWebhook({ db, probot: github.probot, secret: settings.webhookSecret, log }, request), log));
server.listen(Number(process.env.CHAOS_WEB_PORT), "127.0.0.1", () => process.stdout.write("web ready\n"));
