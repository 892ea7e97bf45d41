import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

/**
 * A Redis server of its own, for the test that FLUSHALLs in mid-flight (the shared Redis holds
 * the other files' queues). Started from the redis-server on PATH, nothing kept on disk.
 */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  /** Starts it again on the same port, empty (after `stop`). */
  start(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function serve(port: number): Promise<ChildProcess> {
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const probe = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on("error", () => undefined);
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  probe.disconnect();
  return child;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child = await serve(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    },
    async start() {
      child = await serve(port);
    },
  };
}
