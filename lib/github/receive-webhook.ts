import { verify } from "@octokit/webhooks-methods";
import type { Probot } from "probot";
import { BadInputError, toHttpError, UnauthorizedError, type HttpError } from "../errors";
import type { Db } from "../store/db";
import type { Log } from "./log";
import { forgetDelivery, recordDelivery, type DeliveryStatus } from "./webhook-deliveries";

/** The events Atelier acts on; any other one is answered 200 "filtered". */
export const WANTED_EVENTS: ReadonlySet<string> = new Set([
  "installation",
  "installation_repositories",
  "issues",
  "pull_request",
  "label",
  "push",
  "check_run",
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
  body: { status: DeliveryStatus; id: string } | HttpError["body"];
}

export interface WebhookReceiverDeps {
  db: Db;
  /** The Probot app with Atelier's handlers loaded (probot.config.ts). */
  probot: Probot;
  /** The App's webhook secret. */
  secret: string;
  log: Log;
}

/**
 * Receives one webhook delivery: the HMAC signature is checked before anything else (a bad
 * one is refused with 401 and leaves nothing but a log line); then the delivery is logged by
 * its id — a redelivered id changes nothing — and, when it is an event Atelier wants, handed
 * to the Probot app's handlers.
 */
export async function receiveWebhook(deps: WebhookReceiverDeps, request: WebhookRequest): Promise<WebhookAnswer> {
  const id = request.headers["x-github-delivery"] ?? "";
  const event = request.headers["x-github-event"] ?? "";
  const signature = request.headers["x-hub-signature-256"] ?? "";
  if (!(await signatureMatches(deps.secret, request.body, signature))) {
    deps.log.warn(
      { delivery: id || null, event: event || null, signed: signature !== "" },
      "webhook refused: its X-Hub-Signature-256 does not match the webhook secret. If GitHub sent it, set GITHUB_WEBHOOK_SECRET to the App's webhook secret (App settings → Webhook secret).",
    );
    return answer(
      new UnauthorizedError(
        "webhook_signature_invalid",
        signature === ""
          ? "The delivery has no X-Hub-Signature-256 header: give the App a webhook secret on GitHub and the same one to Atelier (GITHUB_WEBHOOK_SECRET)."
          : "The delivery's signature does not match Atelier's webhook secret: GITHUB_WEBHOOK_SECRET must be the App's webhook secret.",
      ),
    );
  }
  if (!id || !event) {
    return answer(new BadInputError("webhook_headers_missing", "A webhook delivery needs the X-GitHub-Delivery and X-GitHub-Event headers."));
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
  const action = typeof payload.action === "string" ? payload.action : null;
  const installationId = (payload.installation as { id?: unknown } | undefined)?.id;
  const status = WANTED_EVENTS.has(event) ? "accepted" : "filtered";
  const first = await recordDelivery(deps.db, { id, event, action, status, installationId: typeof installationId === "number" ? installationId : null });
  if (!first) {
    deps.log.info({ delivery: id, event, action }, "webhook redelivered: already handled, nothing changes");
    return ok(id, "duplicate");
  }
  if (status === "filtered") return ok(id, "filtered");
  try {
    await deps.probot.receive({ id, name: event, payload } as Parameters<Probot["receive"]>[0]);
  } catch (err) {
    await forgetDelivery(deps.db, id);
    deps.log.error({ delivery: id, event, action, err: err instanceof Error ? err.message : String(err) }, "webhook handler failed; a redelivery will be handled in full");
    return answer(err);
  }
  return ok(id, "accepted");
}

async function signatureMatches(secret: string, body: string, signature: string): Promise<boolean> {
  if (!signature.startsWith("sha256=")) return false;
  try {
    return await verify(secret, body, signature);
  } catch {
    return false;
  }
}

function ok(id: string, status: DeliveryStatus): WebhookAnswer {
  return { status: 200, headers: {}, body: { status, id } };
}

function answer(err: unknown): WebhookAnswer {
  const http = toHttpError(err instanceof AggregateError && err.errors.length === 1 ? err.errors[0] : err);
  return { status: http.status, headers: http.headers, body: http.body };
}
