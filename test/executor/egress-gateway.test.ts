import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
