import type { IncomingMessage, ServerResponse } from "node:http";
import { toHttpError } from "../errors";
import { tooLarge, WEBHOOK_BODY_LIMIT } from "../http/read-body";
import { silentLog, type Log } from "./log";
import { refuseBeforeBody, type WebhookAnswer, type WebhookRequest } from "./receive-webhook";

/**
 * The webhook receiver as a plain Node request handler (the simulator's tests and benchmarks,
 * or a deployment without Next): the raw body and the lower-cased headers go to `receive`.
 * Limits before work, as in the Next route: a declared length over 25 MB or a missing signature
 * is refused unread, and a body is counted while it arrives and abandoned past 25 MB.
 */
export function nodeWebhookHandler(receive: (request: WebhookRequest) => Promise<WebhookAnswer>, log: Log = silentLog) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers[name.toLowerCase()] = value;
    const send = (answer: { status: number; headers: Record<string, string>; body: unknown }, close = false) => {
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers, ...(close ? { connection: "close" } : {}) });
      res.end(JSON.stringify(answer.body));
      if (close) req.destroy();
    };
    const early = refuseBeforeBody(headers, log);
    if (early) return send(early, true);
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > WEBHOOK_BODY_LIMIT.limit) {
        refused = true;
        chunks.length = 0;
        return send(toHttpError(tooLarge(WEBHOOK_BODY_LIMIT)), true);
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (refused) return;
      receive({ headers, body: Buffer.concat(chunks).toString("utf8") })
        .then((answer) => send(answer))
        .catch(() => {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: "internal", message: "Something went wrong inside Atelier; the server log has the details." }));
        });
    });
  };
}
