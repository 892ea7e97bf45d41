// POST /api/github/webhooks — GitHub's deliveries. Thin: the headers are checked before the
// body is read, the body is read while its signature is computed (lib/github/read-signed-body.ts),
// and a signed delivery goes to lib/github/receive-webhook.ts. The receiver is built when the
// web process starts (instrumentation.ts).
import { toHttpError } from "../../../../lib/errors";
import { createLog } from "../../../../lib/github/log";
import { readSignedBody } from "../../../../lib/github/read-signed-body";
import { refuseBeforeBody, signatureMismatch } from "../../../../lib/github/receive-webhook";
import { newNonce, securityHeaders, servedOverHttps } from "../../../../lib/http/security-headers";
import { webhookReceiver, type Receiver } from "../../../_server/webhook-receiver";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const edgeLog = createLog("atelier.webhooks");

type Answer = { status: number; headers: Record<string, string>; body: unknown };

export async function POST(request: Request): Promise<Response> {
  // the Proxy does not see this route (proxy.ts): its answers carry the same headers from here
  const guard = securityHeaders({ nonce: newNonce(), https: servedOverHttps(request.url, request.headers) });
  const json = (answer: Answer): Response => Response.json(answer.body, { status: answer.status, headers: { ...guard, ...answer.headers } });
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  // limits before work: a delivery over 25 MB, or with no signature, is refused unread
  const early = refuseBeforeBody(headers, edgeLog);
  if (early) {
    await request.body?.cancel().catch(() => undefined);
    return json(early);
  }
  let receiver: Receiver;
  try {
    receiver = await webhookReceiver();
  } catch (err) {
    await request.body?.cancel().catch(() => undefined);
    const http = toHttpError(err);
    return json({ ...http, status: http.status === 500 ? 503 : http.status });
  }
  try {
    const read = await readSignedBody(request.body, headers["content-length"], receiver.secret, headers["x-hub-signature-256"] ?? "");
    if (!read.signed) return json(signatureMismatch(headers, edgeLog));
    return json(await receiver.receive({ headers, body: read.body }));
  } catch (err) {
    // too large, or the delivery log itself could not be written (Postgres down: 503, GitHub may redeliver)
    return json(toHttpError(err));
  }
}
