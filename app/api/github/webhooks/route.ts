// POST /api/github/webhooks — GitHub's deliveries. Thin: the raw body and the headers go to
// lib/github/receive-webhook.ts, which verifies the signature before anything else.
import { BullWorkQueue, bullConnection } from "../../../../jobs/queues";
import { loadGitHubAppSettings } from "../../../../lib/config/github-app";
import { instanceConfig } from "../../../../lib/auth/instance-config";
import { createRedis, instanceKeyPrefix } from "../../../../lib/config/redis";
import { toHttpError } from "../../../../lib/errors";
import { handleCheckRunEvent, type CheckRunEventPayload } from "../../../../lib/mirror/check-run-actions";
import { createGitHubApp } from "../../../../lib/github/app";
import { redisRateBlocks } from "../../../../lib/github/redis-rate-blocks";
import { createLog } from "../../../../lib/github/log";
import { readBodyLimited, WEBHOOK_BODY_LIMIT } from "../../../../lib/http/read-body";
import { receiveWebhook, refuseBeforeBody, type WebhookRequest } from "../../../../lib/github/receive-webhook";
import { db as webDb } from "../../../_server/db";
import { dashboardContext } from "../../../_server/services";
import { atelierApp } from "../../../../probot.config";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

type Receiver = (request: WebhookRequest) => ReturnType<typeof receiveWebhook>;

let receiver: Promise<Receiver> | null = null;

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
  return (request) => receiveWebhook({ db, probot: github.probot, secret: settings.webhookSecret, log }, request);
}

const edgeLog = createLog("atelier.webhooks");

export async function POST(request: Request): Promise<Response> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  // limits before work: a delivery over 25 MB, or with no signature, is refused unread
  const early = refuseBeforeBody(headers, edgeLog);
  if (early) {
    await request.body?.cancel().catch(() => undefined);
    return Response.json(early.body, { status: early.status, headers: early.headers });
  }
  let receive: Receiver;
  try {
    receive = await (receiver ??= createReceiver());
  } catch (err) {
    receiver = null;
    const http = toHttpError(err);
    return Response.json(http.body, { status: http.status === 500 ? 503 : http.status, headers: http.headers });
  }
  let body: string;
  try {
    body = await readBodyLimited(request.body, headers["content-length"], WEBHOOK_BODY_LIMIT);
  } catch (err) {
    const http = toHttpError(err);
    return Response.json(http.body, { status: http.status, headers: http.headers });
  }
  try {
    const answer = await receive({ headers, body });
    return Response.json(answer.body, { status: answer.status, headers: answer.headers });
  } catch (err) {
    // the delivery log itself could not be written (Postgres down): 503, GitHub may redeliver
    const http = toHttpError(err);
    return Response.json(http.body, { status: http.status, headers: http.headers });
  }
}
