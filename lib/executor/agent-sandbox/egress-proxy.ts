import { metrics } from "../../metrics/metrics";
import { lookup } from "node:dns/promises";
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, createServer, isIP, type Server, type Socket } from "node:net";
import { constants } from "node:fs";
import { chmod, open, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { classifyAddress } from "../../http/address-class";
import { egressAllows, isLoopbackRule, type EgressRule } from "./policy";

/**
 * The only way out of an agent's network namespace. It listens on unix sockets inside the
 * Attempt's run directory (bound into the sandbox): `proxy.sock` is an HTTP proxy (CONNECT, and
 * absolute-form plain HTTP) that lets through only the hosts of the roster's `egress:` and,
 * for those, only public addresses (resolved here and pinned, so a name that resolves to
 * Postgres, Redis, the metadata service or a private range is refused); `lo-<port>.sock`
 * forwards to that port of this machine's loopback, for each loopback port the roster lists
 * explicitly. Everything else is refused before any connection is made.
 */

export interface EgressRefusal {
  host: string;
  port: number;
  reason: string;
}

export interface EgressGateway {
  /** The unix socket of the HTTP proxy, when the rules name any host beyond loopback ports. */
  proxySocket: string | null;
  /** Loopback ports bridged into the sandbox, with their unix socket. */
  loopback: { port: number; socket: string }[];
  close(): Promise<void>;
}

export interface EgressOptions {
  onRefused?: (refusal: EgressRefusal) => void;
  /** Connection attempts time out after this long (default 30 s). */
  connectTimeoutMs?: number;
}

/**
 * A unix socket's path may hold 107 bytes; an Attempt's run directory under a deep workspace
 * is longer, and the kernel would bind a cut-off path. A longer path is bound through the
 * directory's descriptor (/proc/self/fd/N/name), which names the same place in a few bytes.
 */
const MAX_SOCKET_PATH = 100;

async function listenUnix(server: Server, path: string): Promise<void> {
  await rm(path, { force: true });
  const dir = Buffer.byteLength(path) > MAX_SOCKET_PATH ? await open(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY) : null;
  try {
    const address = dir ? `/proc/self/fd/${dir.fd}/${basename(path)}` : path;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(address, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } finally {
    await dir?.close();
  }
  // the agent's uid must be able to connect; the directory is the agent's only way to it
  await chmod(path, 0o666);
}

/** The address to connect to for an allowed host: public addresses only. */
async function resolvePublic(host: string): Promise<{ address: string } | { refused: string }> {
  const literal = isIP(host) ? [{ address: host }] : await lookup(host, { all: true, verbatim: true }).catch(() => null);
  if (!literal || literal.length === 0) return { refused: `${host} does not resolve` };
  for (const { address } of literal) {
    const cls = classifyAddress(address);
    if (cls !== "public") return { refused: `${host} resolves to a ${cls} address (${address})` };
  }
  return { address: literal[0]!.address };
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  if (!m) return null;
  const port = m[2] ? Number(m[2]) : defaultPort;
  if (!(port > 0 && port < 65_536)) return null;
  return { host: m[1]!.replace(/^\[|\]$/g, "").toLowerCase(), port };
}

export async function startEgressGateway(runDir: string, rules: readonly EgressRule[], options: EgressOptions = {}): Promise<EgressGateway> {
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const timeout = options.connectTimeoutMs ?? 30_000;
  const refuse = (host: string, port: number, reason: string) => {
    metrics.sandboxRefusals.inc();
    try {
      options.onRefused?.({ host, port, reason });
    } catch {
      // a failing listener must not break the gateway
    }
  };
  const remoteRules = rules.filter((r) => !isLoopbackRule(r));

  /** Decides and resolves; the reason when refused. */
  const admit = async (host: string, port: number): Promise<{ address: string } | { refused: string }> => {
    if (!egressAllows(remoteRules, host, port)) return { refused: "not in the agent's egress allowlist" };
    return resolvePublic(host);
  };

  const loopback: EgressGateway["loopback"] = [];
  for (const rule of rules.filter(isLoopbackRule)) {
    if (loopback.some((l) => l.port === rule.port)) continue;
    const socket = join(runDir, `lo-${rule.port}.sock`);
    const server = createServer((inbound) => {
      track(inbound);
      const outbound = connect({ host: rule.host === "::1" ? "::1" : "127.0.0.1", port: rule.port });
      track(outbound);
      inbound.pipe(outbound).pipe(inbound);
      outbound.once("error", () => inbound.destroy());
      inbound.once("close", () => outbound.destroy());
      outbound.once("close", () => inbound.destroy());
    });
    await listenUnix(server, socket);
    servers.push(server);
    loopback.push({ port: rule.port, socket });
  }

  let proxySocket: string | null = null;
  if (remoteRules.length > 0) {
    proxySocket = join(runDir, "proxy.sock");
    const proxy = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      // absolute-form plain HTTP: GET http://host/path
      let target: URL;
      try {
        target = new URL(req.url ?? "");
      } catch {
        res.writeHead(400).end("egress: only absolute URLs or CONNECT\n");
        return;
      }
      const port = Number(target.port || 80);
      const host = target.hostname.replace(/^\[|\]$/g, "").toLowerCase();
      if (target.protocol !== "http:") {
        res.writeHead(400).end("egress: use CONNECT for https\n");
        return;
      }
      void admit(host, port).then((decision) => {
        if ("refused" in decision) {
          refuse(host, port, decision.refused);
          res.writeHead(403, { "content-type": "text/plain" }).end(`egress refused: ${host}:${port} (${decision.refused})\n`);
          return;
        }
        const headers = { ...req.headers };
        delete headers["proxy-connection"];
        delete headers["proxy-authorization"];
        const out = httpRequest(
          { host: decision.address, port, method: req.method, path: `${target.pathname}${target.search}`, headers, timeout },
          (upstream) => {
            res.writeHead(upstream.statusCode ?? 502, upstream.headers);
            upstream.pipe(res);
          },
        );
        out.on("error", () => res.writeHead(502).end("egress: upstream failed\n"));
        req.pipe(out);
      });
    });
    proxy.on("connection", track);
    proxy.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
      track(client);
      const target = splitHostPort(req.url ?? "", 443);
      if (!target) {
        client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
        return;
      }
      void admit(target.host, target.port).then((decision) => {
        if ("refused" in decision) {
          refuse(target.host, target.port, decision.refused);
          client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\negress refused: ${target.host}:${target.port} (${decision.refused})\n`);
          return;
        }
        const upstream = connect({ host: decision.address, port: target.port, timeout });
        track(upstream);
        upstream.once("connect", () => {
          upstream.setTimeout(0);
          client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
          if (head.length) upstream.write(head);
          upstream.pipe(client).pipe(upstream);
        });
        upstream.once("timeout", () => upstream.destroy());
        upstream.once("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
        client.once("close", () => upstream.destroy());
      });
    });
    await listenUnix(proxy, proxySocket);
    servers.push(proxy);
  }

  return {
    proxySocket,
    loopback,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
