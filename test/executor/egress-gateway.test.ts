import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readClientHello } from "../../lib/executor/agent-sandbox/client-hello";
import { startEgressGateway } from "../../lib/executor/agent-sandbox/egress-proxy";
import { parseEgressRule } from "../../lib/executor/agent-sandbox/policy";

/**
 * The gateway's sockets live in the Attempt's run directory, however deep the workspace is: a
 * unix socket's path holds 107 bytes, and a run directory of a workspace under a long path
 * (a checkout's test-results/…/attempts/<run id>_agent_1/box/run) is longer than that.
 */

let root: string;
let echo: Server;
let port: number;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "atelier-egress-"));
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  port = (echo.address() as { port: number }).port;
});
afterAll(() => {
  echo.close();
  rmSync(root, { recursive: true, force: true });
});

const roundTrip = (socket: string) =>
  new Promise<string>((resolve, reject) => {
    const c = connect(socket, () => c.write("ping"));
    c.setEncoding("utf8");
    c.once("data", (d: string) => {
      c.end();
      resolve(d);
    });
    c.on("error", reject);
  });

describe("the egress gateway's loopback bridge", () => {
  it("listens at its full path in a run directory deeper than a socket path may be", async () => {
    const runDir = join(root, "work", "checkout", "test-results", "e2e-stack", "workspaces", "attempts", `${"0ccce06254c32a53b41ff3b8e9d5b18d"}_agent_1`, "box", "run");
    mkdirSync(runDir, { recursive: true });
    const gateway = await startEgressGateway(runDir, [parseEgressRule(`127.0.0.1:${port}`)!]);
    try {
      const socket = gateway.loopback[0]!.socket;
      expect(socket).toBe(join(runDir, `lo-${port}.sock`));
      expect(Buffer.byteLength(socket)).toBeGreaterThan(108);
      // the sandbox reaches it as /atelier/run/lo-<port>.sock; the host, here, by a short link
      symlinkSync(runDir, join(root, "run"));
      expect(await roundTrip(join(root, "run", basename(socket)))).toBe("ping");
    } finally {
      await gateway.close();
    }
  });
});

/**
 * THREATS.md 30, played by the attacker: the gateway checked names, not destinations. A name
 * stands here for this machine's loopback (the policy allows it, as a test's resolver says), so
 * whatever passes the checks reaches a recorder on a loopback port, and what is refused never does.
 */
describe("the egress gateway checks where a connection goes, not only the name it asks for", () => {
  const HOST = "api.example.com";
  let upstream: Server;
  let upstreamPort: number;
  let received: Buffer[];
  let refusals: string[];
  let gateway: Awaited<ReturnType<typeof startEgressGateway>>;

  const policy = { allowPrivate: true, resolve: async () => [{ address: "127.0.0.1", family: 4 }] };

  beforeAll(async () => {
    // answers once it has heard something, so whatever it heard is recorded before the client sees the end
    upstream = createServer((s) => {
      s.on("data", (d: Buffer) => received.push(d));
      s.on("error", () => undefined);
      s.once("data", () => s.end("HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nupstream"));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamPort = (upstream.address() as { port: number }).port;
    const runDir = join(root, "checks");
    mkdirSync(runDir, { recursive: true });
    gateway = await startEgressGateway(runDir, [parseEgressRule(HOST)!, parseEgressRule(`${HOST}:${upstreamPort}`)!], {
      policy,
      helloTimeoutMs: 5_000,
      onRefused: (r) => refusals.push(`${r.host}:${r.port} ${r.reason}`),
    });
  });
  afterAll(async () => {
    await gateway.close();
    upstream.close();
  });
  beforeEach(() => {
    received = [];
    refusals = [];
  });

  /** Sends raw bytes to the proxy; everything it answered once it closed. */
  const exchange = (request: string, then?: (s: Socket) => void) =>
    new Promise<string>((resolve) => {
      const c = connect(gateway.proxySocket!, () => c.write(request));
      let answer = "";
      c.on("data", (d: Buffer) => {
        answer += d.toString("latin1");
        if (then && answer.includes("\r\n\r\n")) {
          const next = then;
          then = undefined;
          next(c);
        }
      });
      c.on("error", () => undefined);
      c.on("close", () => resolve(answer));
    });
  const tunnel = (port: number, hello: Buffer) => exchange(`CONNECT ${HOST}:${port} HTTP/1.1\r\nHost: ${HOST}:${port}\r\n\r\n`, (s) => s.write(hello));

  it("a rule without a port opens 443 only: port 80 of an allowed host is refused, as CONNECT and as plain HTTP", async () => {
    expect(await exchange(`CONNECT ${HOST}:80 HTTP/1.1\r\nHost: ${HOST}:80\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 .*not in the agent's egress allowlist/s);
    expect(await exchange(`GET http://${HOST}/ HTTP/1.1\r\nHost: ${HOST}\r\nconnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 .*not in the agent's egress allowlist/s);
    expect(refusals).toEqual([`${HOST}:80 not in the agent's egress allowlist`, `${HOST}:80 not in the agent's egress allowlist`]);
  });

  it("plain HTTP: a Host header that is not the URL's host is refused before anything is sent", async () => {
    const url = `http://${HOST}:${upstreamPort}/v1/x`;
    const answer = await exchange(`GET ${url} HTTP/1.1\r\nHost: other-site.example.net\r\nconnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 403 .*its Host header "other-site.example.net" is not api\.example\.com/s);
    expect(received).toEqual([]);
    // the same request with its own host goes through
    expect(await exchange(`GET ${url} HTTP/1.1\r\nHost: ${HOST}:${upstreamPort}\r\nconnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 .*upstream$/s);
    expect(Buffer.concat(received).toString()).toContain(`host: ${HOST}:${upstreamPort}`);
  });

  it("CONNECT: a TLS ClientHello naming another server (SNI) is refused before anything reaches the address", async () => {
    const other = await tlsThroughTunnel("other-site.example.net");
    expect(other).toBe("closed");
    expect(received).toEqual([]);
    expect(refusals).toEqual([`${HOST}:${upstreamPort} its TLS ClientHello names other-site.example.net, not ${HOST}`]);
    // its own name goes through: the recorder receives the ClientHello
    await tlsThroughTunnel(HOST);
    expect(received[0]![0]).toBe(22);
    expect(readClientHello(Buffer.concat(received))).toMatchObject({ tag: "hello", serverName: HOST, encrypted: false });
  });

  it("CONNECT: no server name, an encrypted ClientHello (ECH) or anything but TLS is refused", async () => {
    await tunnel(upstreamPort, clientHello([]));
    await tunnel(upstreamPort, clientHello([sni(HOST), extension(0xfe0d, Buffer.from([0, 0, 1, 0, 1]))]));
    await tunnel(upstreamPort, Buffer.from(`GET / HTTP/1.1\r\nHost: other-site.example.net\r\n\r\n`));
    expect(received).toEqual([]);
    expect(refusals).toEqual([
      `${HOST}:${upstreamPort} its TLS ClientHello names no server (SNI)`,
      `${HOST}:${upstreamPort} its TLS ClientHello is encrypted (ECH): the gateway cannot see where it goes`,
      `${HOST}:${upstreamPort} a tunnel carries TLS only, and it is not TLS`,
    ]);
  });

  it("CONNECT: a ClientHello split across records and writes is read whole", async () => {
    const hello = clientHello([sni(HOST)]);
    const body = hello.subarray(5);
    const half = Math.floor(body.length / 2);
    const record = (part: Buffer) => Buffer.concat([Buffer.from([22, 3, 1, part.length >> 8, part.length & 0xff]), part]);
    await exchange(`CONNECT ${HOST}:${upstreamPort} HTTP/1.1\r\nHost: x\r\n\r\n`, (s) => {
      const bytes = Buffer.concat([record(body.subarray(0, half)), record(body.subarray(half))]);
      s.write(bytes.subarray(0, 7));
      setTimeout(() => s.write(bytes.subarray(7)), 50);
    });
    expect(refusals).toEqual([]);
    expect(Buffer.concat(received).length).toBe(hello.length + 5);
  });

  /** A real TLS client (Node's OpenSSL) through a tunnel: "closed" when the gateway cut it. */
  function tlsThroughTunnel(servername: string): Promise<string> {
    return new Promise((resolve) => {
      const raw = connect(gateway.proxySocket!, () => raw.write(`CONNECT ${HOST}:${upstreamPort} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`));
      raw.once("data", () => {
        const secure = tlsConnect({ socket: raw, servername, rejectUnauthorized: false });
        secure.on("error", () => undefined);
        secure.on("close", () => resolve("closed"));
        // the recorder answers plain text: the handshake fails there, after the hello went through
        setTimeout(() => secure.destroy(), 2_000);
      });
    });
  }
});

describe("readClientHello", () => {
  it("reads the server name and says when more bytes are needed", () => {
    const hello = clientHello([sni("Api.Example.com")]);
    expect(readClientHello(hello)).toEqual({ tag: "hello", serverName: "Api.Example.com", encrypted: false });
    expect(readClientHello(hello.subarray(0, 3))).toEqual({ tag: "incomplete" });
    expect(readClientHello(hello.subarray(0, hello.length - 1))).toEqual({ tag: "incomplete" });
    // early data after the hello is not read
    expect(readClientHello(Buffer.concat([hello, Buffer.from([23, 3, 3, 0, 1, 0])]))).toMatchObject({ tag: "hello" });
  });

  it("refuses what is not a ClientHello, a repeated extension and a truncated one", () => {
    expect(readClientHello(Buffer.from("CONNECT"))).toEqual({ tag: "invalid", reason: "it is not TLS" });
    expect(readClientHello(clientHello([sni("a.example"), sni("b.example")]))).toEqual({ tag: "invalid", reason: "the ClientHello repeats an extension" });
    const hello = clientHello([sni("a.example")]);
    hello.writeUInt16BE(hello.readUInt16BE(hello.length - 15) + 40, hello.length - 15);
    expect(readClientHello(hello).tag).not.toBe("hello");
  });
});

const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const vec16 = (b: Buffer) => Buffer.concat([u16(b.length), b]);
const extension = (type: number, body: Buffer) => Buffer.concat([u16(type), vec16(body)]);
const sni = (name: string) => extension(0, vec16(Buffer.concat([Buffer.from([0]), vec16(Buffer.from(name))])));

/** A minimal TLS 1.3 ClientHello record with these extensions. */
function clientHello(extensions: Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from([3, 3]), Buffer.alloc(32, 7), Buffer.from([0]), vec16(Buffer.from([0x13, 0x01])), Buffer.from([1, 0]), vec16(Buffer.concat(extensions))]);
  const handshake = Buffer.concat([Buffer.from([1, 0, body.length >> 8, body.length & 0xff]), body]);
  return Buffer.concat([Buffer.from([22, 3, 1]), u16(handshake.length), handshake]);
}
