import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { UsageMeter, type ApiProtocol, type MeteredUsage } from "./usage-meter";

/**
 * Brokered credentials: the agent speaks plain HTTP to a local base URL that stands for one
 * upstream API (its model API, or another tool's); the gateway drops whatever credential the
 * agent sent, adds the instance's own for that upstream, and forwards to it (over TLS, but for
 * a loopback fake). The key lives in the worker only: the sandbox holds a placeholder. On the
 * way back the gateway reads the model's usage from the answers (usage-meter.ts).
 */

export interface BrokeredApi {
  /** The upstream's base URL: https, or http to a loopback address. Requests go below its path only. */
  url: string;
  /** The header the gateway sets (x-api-key, authorization). */
  header: string;
  /** Its value: the credential, with its scheme when it has one ("Bearer …"). */
  value: string;
  /** Whose answers the gateway reads the usage from; null: this API is not metered. */
  protocol: ApiProtocol | null;
}

/**
 * The calls a brokered model API answers, below its base URL: the generations the gateway meters
 * (and what the CLIs ask besides: a connectivity HEAD, token counts, the model list). Anything
 * else the key could buy (batches, files, fine-tuning) would not be metered: refused.
 */
const MODEL_CALLS: Readonly<Record<ApiProtocol, readonly RegExp[]>> = {
  anthropic: [/^HEAD \/$/, /^POST \/v1\/messages(\/count_tokens)?$/, /^GET \/v1\/models(\/[^/]+)?$/],
  openai: [/^POST \/responses(\/compact)?$/, /^GET \/models(\/[^/]+)?$/],
};

/** Whether a model API answers `method path` (the path below its base URL). */
export function isModelCall(protocol: ApiProtocol, method: string, path: string): boolean {
  return MODEL_CALLS[protocol].some((call) => call.test(`${method} ${path}`));
}

/** What the agent is given instead of a key: clients that insist on one get this. */
export const PLACEHOLDER_KEY = "atelier-gateway-holds-the-key";

/** Headers of one hop, and the credentials an agent may send: none of them is forwarded. */
const DROPPED_REQUEST_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "authorization",
  "x-api-key",
  "api-key",
  "cookie",
  "accept-encoding",
]);
const DROPPED_RESPONSE_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "trailer", "upgrade", "set-cookie"]);

function without(headers: IncomingHttpHeaders, dropped: Set<string>): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!dropped.has(name)) out[name] = value;
  return out;
}

/** The upstream URL of an agent's request; null when it would leave the API's base path. */
export function upstreamUrl(base: URL, path: string): URL | null {
  if (!path.startsWith("/") || path.startsWith("//")) return null;
  const prefix = base.pathname.replace(/\/+$/, "");
  let target: URL;
  try {
    target = new URL(`${prefix}${path}`, base.origin);
  } catch {
    return null;
  }
  if (target.origin !== base.origin) return null;
  return target.pathname === prefix || target.pathname.startsWith(`${prefix}/`) ? target : null;
}

export interface Broker {
  /** Serves one API: mount it on a server of your own. */
  handle(api: BrokeredApi): (req: IncomingMessage, res: ServerResponse) => void;
  metered(): MeteredUsage;
  close(): void;
}

export function createBroker(): Broker {
  const meter = new UsageMeter();
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  return {
    handle(api) {
      const base = new URL(api.url);
      const secure = base.protocol === "https:";
      const prefix = base.pathname.replace(/\/+$/, "");
      return (req, res) => {
        const target = upstreamUrl(base, req.url ?? "");
        if (!target) {
          res.writeHead(400, { "content-type": "text/plain" }).end("gateway: a request path below the API's base URL\n");
          return;
        }
        const below = target.pathname.slice(prefix.length) || "/";
        if (api.protocol && !isModelCall(api.protocol, req.method ?? "", below)) {
          res.writeHead(403, { "content-type": "text/plain" }).end(`gateway: ${req.method} ${below} is not a model call the gateway meters\n`);
          return;
        }
        const headers = { ...without(req.headers, DROPPED_REQUEST_HEADERS), host: base.host, "accept-encoding": "identity", [api.header.toLowerCase()]: api.value };
        const options = { method: req.method, headers, agent: secure ? agents.https : agents.http };
        const out = (secure ? httpsRequest : httpRequest)(target, options, (upstream) => {
          const status = upstream.statusCode ?? 502;
          if (api.protocol && status >= 200 && status < 300) meter.observe(api.protocol, upstream, String(upstream.headers["content-type"] ?? ""));
          res.writeHead(status, without(upstream.headers, DROPPED_RESPONSE_HEADERS));
          upstream.pipe(res);
          upstream.once("error", () => res.destroy());
        });
        out.once("error", (err: NodeJS.ErrnoException) => {
          if (res.headersSent) res.destroy();
          else res.writeHead(502, { "content-type": "text/plain" }).end(`gateway: ${base.host} cannot be reached (${err.code ?? err.message})\n`);
        });
        // the agent hung up: so does the gateway (the model stops generating, and billing)
        res.once("close", () => {
          if (!res.writableFinished) out.destroy();
        });
        req.pipe(out);
      };
    },
    metered: () => meter.reading(),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export interface LocalBroker {
  /** The local base URL of each API, in order. */
  urls: string[];
  metered(): MeteredUsage;
  close(): Promise<void>;
}

/**
 * The broker of an agent that runs unconfined (`sandbox: off`): each API on a port of this
 * machine's loopback. Such an agent runs as the worker and could read the worker's environment
 * anyway; the broker keeps its metering and its requests the same as in a sandbox.
 */
export async function startLocalBroker(apis: readonly BrokeredApi[]): Promise<LocalBroker> {
  const broker = createBroker();
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const urls: string[] = [];
  for (const api of apis) {
    const server = createServer(broker.handle(api));
    server.on("connection", (s: Socket) => {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  return {
    urls,
    metered: () => broker.metered(),
    async close() {
      for (const s of sockets) s.destroy();
      broker.close();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
