import { spawn, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "./free-port";

/**
 * A Redis server of the test's own, for the tests that FLUSHALL or stop Redis in mid-flight
 * (the shared Redis holds the other files' queues). Started from the redis-server on PATH,
 * nothing kept on disk; `start` after `stop` brings it back on the same port (and does nothing while it runs).
 */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function answered(url: string): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on("error", () => undefined);
  const deadline = Date.now() + 10_000;
  try {
    for (;;) {
      try {
        await probe.connect();
        await probe.ping();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    probe.disconnect();
  }
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const start = async () => {
    // a second server on the port would fail to bind while the first ran on, left behind by `stop`
    if (child && child.exitCode === null && child.signalCode === null) return;
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    await answered(url);
  };
  await start();
  return {
    url,
    start,
    async stop() {
      const running = child;
      child = null;
      if (!running) return;
      running.kill("SIGKILL");
      await new Promise((r) => running.once("exit", r));
    },
  };
}
