import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The HTTP plumbing of the scripted model APIs (fake-anthropic.ts, fake-openai.ts): a real local
 * server that records every request with its JSON body, answers what the fake does not expect
 * with 404 (recorded in `unexpected`), and can leave a response hanging until close().
 */

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

export interface Exchange {
  recorded: RecordedRequest;
  /** The URL's path, without the query. */
  path: string;
  res: ServerResponse;
  /** Answers 404 with `body` and records the request as unexpected. */
  notExpected(body: unknown): void;
  /** Sends SSE headers and never ends the response. */
  hang(): void;
}

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  unexpected: RecordedRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

export async function startScriptedServer(handle: (x: Exchange) => void): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const unexpected: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        /* kept as text */
      }
      const recorded: RecordedRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      requests.push(recorded);
      handle({
        recorded,
        path: (req.url ?? "").split("?")[0] ?? "",
        res,
        notExpected: (answer) => {
          unexpected.push(recorded);
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify(answer));
        },
        hang: () => {
          hanging.add(res);
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.flushHeaders();
        },
      });
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
