import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { NotFoundError, toHttpError } from "../errors";
import { scrapeMetrics } from "./scrape";
import { liveness, readiness, readinessStatus, type ReadinessDeps } from "./readiness";

/**
 * The worker's small HTTP port (ATELIER_WORKER_HEALTH_PORT): GET /healthz, /readyz and
 * /metrics, as the web process answers them. Nothing else is served; every other path is 404.
 */

export interface HealthServer {
  port: number;
  /** the address it listens on */
  host: string;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  port: number;
  host?: string;
  version: string;
  readiness: Omit<ReadinessDeps, "requireWorker">;
}

/**
 * The address the port binds (ATELIER_WORKER_HEALTH_HOST): loopback unless the operator opens it
 * (`0.0.0.0` for a kubelet's probes or a scraper on another host).
 */
export function healthHostFrom(env: NodeJS.ProcessEnv = process.env): string {
  return env.ATELIER_WORKER_HEALTH_HOST?.trim() || "127.0.0.1";
}

/** The port from the environment: null (off) when unset or empty. */
export function healthPortFrom(env: NodeJS.ProcessEnv = process.env): number | null {
  const raw = env.ATELIER_WORKER_HEALTH_PORT?.trim();
  if (!raw) return null;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`ATELIER_WORKER_HEALTH_PORT is "${raw}": give a port number (0-65535), or leave it unset to serve no health port.`);
  }
  return port;
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store", ...headers }).end(body);
}

async function answer(req: IncomingMessage, res: ServerResponse, options: HealthServerOptions): Promise<void> {
  const path = new URL(req.url ?? "/", "http://worker").pathname;
  if (req.method !== "GET" && req.method !== "HEAD") throw new NotFoundError("not_found", "The health port answers GET /healthz, /readyz and /metrics.");
  if (path === "/healthz") return send(res, 200, "application/json", JSON.stringify(liveness(options.version)));
  if (path === "/readyz") {
    const r = await readiness({ ...options.readiness, requireWorker: false });
    return send(res, readinessStatus(r), "application/json", JSON.stringify(r));
  }
  if (path === "/metrics") {
    const m = await scrapeMetrics(req.headers.authorization);
    return send(res, 200, m.contentType, m.body);
  }
  throw new NotFoundError("not_found", "The health port answers GET /healthz, /readyz and /metrics.");
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    answer(req, res, options).catch((err: unknown) => {
      const http = toHttpError(err);
      send(res, http.status, "application/json", JSON.stringify(http.body), http.headers);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? healthHostFrom(), () => resolve());
  });
  server.unref();
  return {
    port: (server.address() as AddressInfo).port,
    host: (server.address() as AddressInfo).address,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
