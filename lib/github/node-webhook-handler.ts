import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebhookAnswer, WebhookRequest } from "./receive-webhook";

/**
 * The webhook receiver as a plain Node request handler (the simulator's tests and benchmarks,
 * or a deployment without Next): the raw body and the lower-cased headers go to `receive`.
 */
export function nodeWebhookHandler(receive: (request: WebhookRequest) => Promise<WebhookAnswer>) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers[name.toLowerCase()] = value;
      receive({ headers, body: Buffer.concat(chunks).toString("utf8") })
        .then((answer) => {
          res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
          res.end(JSON.stringify(answer.body));
        })
        .catch(() => {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: "internal", message: "Something went wrong inside Atelier; the server log has the details." }));
        });
    });
  };
}
