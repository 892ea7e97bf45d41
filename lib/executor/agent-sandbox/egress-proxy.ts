import { metrics } from "../../metrics/metrics";
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, createServer, isIP, type Server, type Socket } from "node:net";
import { constants } from "node:fs";
import { chmod, open, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { classifyAddress } from "../../http/address-class";
import { systemResolver, type TargetPolicy } from "../../http/resolver";
import { createBroker, type BrokeredApi } from "./api-broker";
import { readClientHello } from "./client-hello";
import { egressAllows, isLoopbackRule, type EgressRule } from "./policy";
import type { MeteredUsage } from "./usage-meter";

/**
 * The only way out of an agent's network namespace. It listens on unix sockets inside the
 * Attempt's run directory (bound into the sandbox):
 *  - `proxy.sock` is an HTTP proxy that lets through only the hosts and ports of the roster's
 *    `egress:` (a rule without a port opens 443 only) and, for those, only public addresses
 *    (resolved here and pinned, so a name that resolves to Postgres, Redis, the metadata service
 *    or a private range is refused). It checks the destination, not only the name: a CONNECT
 *    tunnel carries TLS only, and its ClientHello must name the CONNECT host (no SNI, or an
 *    encrypted ClientHello, is refused); a plain-HTTP request's `Host` must be its URL's host.
 *    An allowlisted host on a shared CDN reaches that host, not its neighbours.
 *  - `api-<i>.sock` brokers one HTTP API whose credential the worker holds (api-broker.ts).
 *  - `lo-<port>.sock` forwards to that port of this machine's loopback, for each loopback port
 *    the roster lists explicitly.
 * Everything else is refused before any connection is made.
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
  /** The unix socket of each brokered API, in the order they were given. */
  apis: string[];
  /** What the brokered model APIs said the agent used. */
  metered(): MeteredUsage;
  close(): Promise<void>;
}

export interface EgressOptions {
  onRefused?: (refusal: EgressRefusal) => void;
  /** An allowed host could not be reached (no address, no connection): an outage, not a refusal. */
  onUnreachable?: (failure: EgressRefusal) => void;
  /** Connection attempts time out after this long (default 30 s). */
  connectTimeoutMs?: number;
  /** A tunnel's client must send its TLS ClientHello within this long (default 10 s). */
  helloTimeoutMs?: number;
  /** Which addresses an allowed name may stand for, and who resolves it (default: public only, the system's resolver). */
  policy?: TargetPolicy;
  /** HTTP APIs whose credential the gateway adds (api-broker.ts). */
  apis?: readonly BrokeredApi[];
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

/** The address to connect to for an allowed host: public addresses only, unless the policy allows the others. */
async function resolveAllowed(host: string, policy: TargetPolicy): Promise<{ address: string } | { refused: string; unresolved?: true }> {
  const literal = isIP(host) ? [{ address: host }] : await (policy.resolve ?? systemResolver)(host).catch(() => null);
  if (!literal || literal.length === 0) return { refused: `${host} does not resolve`, unresolved: true };
  for (const { address } of literal) {
    const cls = classifyAddress(address);
    if (cls !== "public" && !policy.allowPrivate) return { refused: `${host} resolves to a ${cls} address (${address})` };
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

/** `host[:port]` of a Host header or a URL, lower-cased, the port made explicit. */
function authority(text: string, defaultPort: number): string | null {
  const parsed = splitHostPort(text.trim(), defaultPort);
  return parsed ? `${parsed.host.replace(/\.$/, "")}:${parsed.port}` : null;
}

/** Why a tunnel's first bytes do not go where its CONNECT said; null when they do. */
function helloProblem(data: Buffer, host: string): string | null | "incomplete" {
  const hello = readClientHello(data);
  if (hello.tag === "incomplete") return "incomplete";
  if (hello.tag === "invalid") return `a tunnel carries TLS only, and ${hello.reason}`;
  if (hello.encrypted) return "its TLS ClientHello is encrypted (ECH): the gateway cannot see where it goes";
  if (hello.serverName === null) return "its TLS ClientHello names no server (SNI)";
  const name = hello.serverName.toLowerCase().replace(/\.$/, "");
  return name === host ? null : `its TLS ClientHello names ${hello.serverName.slice(0, 253)}, not ${host}`;
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
  const helloTimeout = options.helloTimeoutMs ?? 10_000;
  const policy = options.policy ?? { allowPrivate: false };
  const refuse = (host: string, port: number, reason: string) => {
    metrics.sandboxRefusals.inc();
    try {
      options.onRefused?.({ host, port, reason });
    } catch {
      // a failing listener must not break the gateway
    }
  };
  const unreachable = (host: string, port: number, reason: string) => {
    try {
      options.onUnreachable?.({ host, port, reason });
    } catch {
      // ditto
    }
  };
  const remoteRules = rules.filter((r) => !isLoopbackRule(r));

  /** Decides and resolves; the reason when refused. */
  const admit = async (host: string, port: number): Promise<{ address: string } | { refused: string }> => {
    if (!egressAllows(remoteRules, host, port)) return { refused: "not in the agent's egress allowlist" };
    const decision = await resolveAllowed(host, policy);
    if ("refused" in decision && decision.unresolved) unreachable(host, port, decision.refused);
    return decision;
  };
  const listen = async (server: Server, socket: string) => {
    server.on("connection", track);
    await listenUnix(server, socket);
    servers.push(server);
  };

  const loopback: EgressGateway["loopback"] = [];
  for (const rule of rules.filter(isLoopbackRule)) {
    if (loopback.some((l) => l.port === rule.port)) continue;
    const socket = join(runDir, `lo-${rule.port}.sock`);
    const server = createServer((inbound) => {
      const outbound = connect({ host: rule.host === "::1" ? "::1" : "127.0.0.1", port: rule.port });
      track(outbound);
      inbound.pipe(outbound).pipe(inbound);
      let connected = false;
      outbound.once("connect", () => (connected = true));
      outbound.once("error", (err) => {
        if (!connected) unreachable(rule.host, rule.port, err.message);
        inbound.destroy();
      });
      inbound.once("close", () => outbound.destroy());
      outbound.once("close", () => inbound.destroy());
    });
    await listen(server, socket);
    loopback.push({ port: rule.port, socket });
  }

  const broker = createBroker();
  const apis: string[] = [];
  for (const [i, api] of (options.apis ?? []).entries()) {
    const socket = join(runDir, `api-${i}.sock`);
    await listen(createHttpServer(broker.handle(api)), socket);
    apis.push(socket);
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
      const refused = (reason: string) => {
        refuse(host, port, reason);
        res.writeHead(403, { "content-type": "text/plain" }).end(`egress refused: ${host}:${port} (${reason})\n`);
      };
      // the pinned address serves whatever Host asks for: it must be the host that was checked
      if (authority(req.headers.host ?? "", 80) !== `${host}:${port}`) {
        refused(`its Host header ${JSON.stringify((req.headers.host ?? "").slice(0, 253))} is not ${host}`);
        return;
      }
      void admit(host, port).then((decision) => {
        if ("refused" in decision) {
          refused(decision.refused);
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
        out.on("error", (err) => {
          unreachable(host, port, err.message);
          res.writeHead(502).end("egress: upstream failed\n");
        });
        req.pipe(out);
      });
    });
    proxy.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
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
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        // nothing reaches the destination before the ClientHello says it is the CONNECT host
        let hello = head;
        const stop = (reason: string) => {
          clearTimeout(timer);
          refuse(target.host, target.port, reason);
          client.destroy();
        };
        const timer = setTimeout(() => stop("no TLS ClientHello came"), helloTimeout);
        const onData = (chunk: Buffer) => {
          hello = Buffer.concat([hello, chunk]);
          const problem = helloProblem(hello, target.host);
          if (problem === "incomplete") return;
          client.off("data", onData);
          client.pause();
          if (problem) return stop(problem);
          clearTimeout(timer);
          relay(client, target.host, decision.address, target.port, hello);
        };
        client.on("data", onData);
        client.once("close", () => clearTimeout(timer));
        if (hello.length) onData(Buffer.alloc(0));
      });
    });
    await listen(proxy, proxySocket);
  }

  function relay(client: Socket, host: string, address: string, port: number, first: Buffer): void {
    const upstream = connect({ host: address, port, timeout });
    track(upstream);
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      upstream.setTimeout(0);
      upstream.write(first);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.once("error", (err) => {
      if (!connected) unreachable(host, port, err.message);
    });
    upstream.once("timeout", () => {
      if (!connected) unreachable(host, port, "the connection timed out");
      upstream.destroy();
    });
    upstream.once("close", () => client.destroy());
    client.once("close", () => upstream.destroy());
  }

  return {
    proxySocket,
    loopback,
    apis,
    metered: () => broker.metered(),
    async close() {
      for (const s of sockets) s.destroy();
      broker.close();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
