import { createHmac, timingSafeEqual } from "node:crypto";
import type { Probot } from "probot";
import { BadInputError, toHttpError, UnauthorizedError, type HttpError } from "../errors";
import { metrics } from "../metrics/metrics";
import type { Db } from "../store/kernel/db";
import { forgetDelivery, recordDelivery, type DeliveryStatus } from "../store/github/webhook-deliveries";
import { assertDeclaredLength, WEBHOOK_BODY_LIMIT } from "../http/read-body";
import type { Log } from "./log";
import { checkWebhookPayload } from "./webhook-payloads";

/** The events Atelier acts on; any other one is answered 200 "filtered". */
export const WANTED_EVENTS: ReadonlySet<string> = new Set([
  "installation",
  "installation_repositories",
  "repository",
  "issues",
  "pull_request",
  "issue_comment",
  "pull_request_review",
  "pull_request_review_comment",
  "pull_request_review_thread",
  "label",
  "push",
  "check_run",
  "check_suite",
  "status",
]);

export interface WebhookRequest {
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  /** The raw body, exactly as received: the signature covers these bytes. */
  body: string;
}

export interface WebhookAnswer {
  status: number;
  headers: Record<string, string>;
  body: { status: DeliveryStatus; id: string; reason?: string } | HttpError["body"];
}

export interface WebhookReceiverDeps {
  db: Db;
  /** The Probot app with Atelier's handlers loaded (probot.config.ts). */
  probot: Probot;
  /** The App's webhook secret. */
  secret: string;
  log: Log;
}

const SIGNATURE_SHAPE = /^sha256=[0-9a-f]{64}$/i;
/** GitHub's delivery ids are GUIDs; the simulator's and the tests' are of the same alphabet. */
const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;
const EVENT_NAME = /^[a-z_]{1,100}$/;
const ACTION_NAME = /^[a-z_]{1,100}$/;

/** The reason given with a 200 "filtered" for a payload that is not the shape of its event. */
export const UNEXPECTED_PAYLOAD = "unexpected payload";

/**
 * What can be refused from the headers alone, before a byte of the body is read: a declared
 * length over GitHub's 25 MB (413 `webhook_too_large`), and a delivery with no signature or one
 * that cannot be an HMAC-SHA256 (401 `webhook_signature_invalid`). Null: read the body.
 */
export function refuseBeforeBody(headers: Record<string, string | undefined>, log: Log): WebhookAnswer | null {
  try {
    assertDeclaredLength(headers["content-length"], WEBHOOK_BODY_LIMIT);
  } catch (err) {
    log.warn({ delivery_id: headers["x-github-delivery"] ?? null, length: headers["content-length"] }, "webhook refused unread: larger than GitHub's 25 MB");
    return counted(answer(err));
  }
  const signature = headers["x-hub-signature-256"] ?? "";
  if (!SIGNATURE_SHAPE.test(signature)) {
    log.warn({ delivery_id: headers["x-github-delivery"] ?? null, signed: signature !== "" }, "webhook refused unread: no X-Hub-Signature-256 of the form sha256=<64 hex>");
    return counted(answer(signatureRefusal(signature)));
  }
  return null;
}

function signatureRefusal(signature: string): UnauthorizedError {
  return new UnauthorizedError(
    "webhook_signature_invalid",
    signature === ""
      ? "The delivery has no X-Hub-Signature-256 header: give the App a webhook secret on GitHub and the same one to Atelier (GITHUB_WEBHOOK_SECRET)."
      : "The delivery's signature does not match Atelier's webhook secret: GITHUB_WEBHOOK_SECRET must be the App's webhook secret.",
  );
}

/** The 401 of a delivery whose signature does not match the webhook secret, with its log line. */
export function signatureMismatch(headers: Record<string, string | undefined>, log: Log): WebhookAnswer {
  const signature = headers["x-hub-signature-256"] ?? "";
  log.warn(
    { delivery_id: headers["x-github-delivery"] || null, event: headers["x-github-event"] || null, signed: signature !== "" },
    "webhook refused: its X-Hub-Signature-256 does not match the webhook secret. If GitHub sent it, set GITHUB_WEBHOOK_SECRET to the App's webhook secret (App settings → Webhook secret).",
  );
  return answer(signatureRefusal(signature));
}

/**
 * Receives one webhook delivery: the HMAC signature is checked before anything else (a bad
 * one is refused with 401 and leaves nothing but a log line); then the delivery is logged by
 * its id — a redelivered id changes nothing — and, when it is an event Atelier wants, handed
 * to the Probot app's handlers.
 */
export async function receiveWebhook(deps: WebhookReceiverDeps, request: WebhookRequest): Promise<WebhookAnswer> {
  return counted(await receive(deps, request));
}

/** A delivery's outcome for the metrics: what a 200 said, else why it was refused. */
function counted(a: WebhookAnswer): WebhookAnswer {
  const outcome = a.status === 200 ? (a.body as { status: string }).status : a.status === 401 || a.status === 413 ? "refused" : a.status === 400 ? "invalid" : "failed";
  metrics.webhookDeliveries.inc({ outcome });
  return a;
}

async function receive(deps: WebhookReceiverDeps, request: WebhookRequest): Promise<WebhookAnswer> {
  const id = request.headers["x-github-delivery"] ?? "";
  const event = request.headers["x-github-event"] ?? "";
  const signature = request.headers["x-hub-signature-256"] ?? "";
  if (!signatureMatches(deps.secret, request.body, signature)) return signatureMismatch(request.headers, deps.log);
  if (!id || !event) {
    return answer(new BadInputError("webhook_headers_missing", "A webhook delivery needs the X-GitHub-Delivery and X-GitHub-Event headers."));
  }
  if (!DELIVERY_ID.test(id) || !EVENT_NAME.test(event)) {
    return answer(
      new BadInputError("webhook_headers_invalid", "X-GitHub-Delivery must be a GUID-like id (letters, digits, dashes; at most 100) and X-GitHub-Event an event name."),
    );
  }
  let payload: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(request.body);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    payload = parsed as Record<string, unknown>;
  } catch {
    await recordDelivery(deps.db, { id, event, action: null, status: "invalid", installationId: null });
    return answer(new BadInputError("webhook_body_invalid", "The delivery's body is not a JSON object (the App's webhook content type must be application/json)."));
  }
  const action = typeof payload.action === "string" && ACTION_NAME.test(payload.action) ? payload.action : null;
  const rawInstallation = (payload.installation as { id?: unknown } | null | undefined)?.id;
  const installationId = typeof rawInstallation === "number" && Number.isSafeInteger(rawInstallation) && rawInstallation > 0 ? rawInstallation : null;
  const wanted = WANTED_EVENTS.has(event);
  // every payload of an event Atelier acts on is checked before a handler sees it
  const check = wanted ? checkWebhookPayload(event, payload) : null;
  const status = wanted && check?.ok ? "accepted" : "filtered";
  const first = await recordDelivery(deps.db, {
    id,
    event,
    action,
    status,
    installationId,
  });
  const ids = { delivery_id: id, installation_id: installationId };
  if (!first) {
    deps.log.info({ ...ids, event, action }, "webhook redelivered: already handled, nothing changes");
    return ok(id, "duplicate");
  }
  if (check && !check.ok) {
    deps.log.warn({ ...ids, event, action, problems: check.problems }, "webhook filtered: unexpected payload (not the shape GitHub documents for this event); nothing done");
    return { status: 200, headers: {}, body: { status: "filtered", id, reason: UNEXPECTED_PAYLOAD } };
  }
  if (status === "filtered") return ok(id, "filtered");
  try {
    await deps.probot.receive({ id, name: event, payload } as Parameters<Probot["receive"]>[0]);
  } catch (err) {
    await forgetDelivery(deps.db, id);
    deps.log.error({ ...ids, event, action, err: err instanceof Error ? err.message : String(err) }, "webhook handler failed; a redelivery will be handled in full");
    return answer(err);
  }
  deps.log.info({ ...ids, event, action }, "webhook handled");
  return ok(id, "accepted");
}

/** HMAC-SHA256 of the raw body, compared in constant time; an empty body has a signature too. */
function signatureMatches(secret: string, body: string, signature: string): boolean {
  return Boolean(secret) && digestMatches(createHmac("sha256", secret).update(body, "utf8").digest(), signature);
}

/** Whether an HMAC-SHA256 digest is the one `X-Hub-Signature-256` names (constant time). */
export function digestMatches(digest: Buffer, signature: string): boolean {
  if (!SIGNATURE_SHAPE.test(signature)) return false;
  const given = Buffer.from(signature.slice("sha256=".length), "hex");
  return given.length === digest.length && timingSafeEqual(given, digest);
}

function ok(id: string, status: DeliveryStatus): WebhookAnswer {
  return { status: 200, headers: {}, body: { status, id } };
}

function answer(err: unknown): WebhookAnswer {
  const http = toHttpError(err instanceof AggregateError && err.errors.length === 1 ? err.errors[0] : err);
  return { status: http.status, headers: http.headers, body: http.body };
}
