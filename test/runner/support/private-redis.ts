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

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
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
  return {
    url,
    async stop() {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    },
  };
}
