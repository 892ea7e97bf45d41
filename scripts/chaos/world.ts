import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../test/support/free-port";
import { startPrivateCluster, type PrivateCluster } from "../../test/support/private-cluster";
import { startPrivateRedis, type PrivateRedis } from "../../test/support/private-redis";
import { Child } from "./processes";

/** The instance's config: the demo agent, 16 slots a worker, a short poll. */
const INSTANCE_CONFIG = `poll_interval_seconds: 10
max_concurrent_attempts: 16
`;

/** The chaos repositories' Loop: no approval, the demo agent, the issue's body in the prompt (it holds the demo's sleep). */
export const CHAOS_REPO_CONFIG = `labels:
  - { name: ready-for-agent, color: 0e8a16 }
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: demo
    max_cycles: 3
    prompt: |
      Implement issue #\${{ item.number }}: \${{ item.title }}
      \${{ item.body }}
`;

/**
 * Everything a chaos run breaks, of its own: a Postgres cluster and a Redis on private ports,
 * the GitHub simulator, the web process (webhook receiver) and two worker processes, on ports
 * free when it starts (another chaos run on the machine has its own).
 */
export class ChaosWorld {
  readonly dir = mkdtempSync(join(tmpdir(), "atelier-chaos-"));
  readonly simUrl: string;
  readonly webhookUrl: string;
  readonly workers: Child[];
  readonly web: Child;
  readonly sim: Child;
  db!: pg.Pool;

  private constructor(
    readonly postgres: PrivateCluster,
    readonly redis: PrivateRedis,
    ports: { sim: number; web: number },
  ) {
    this.simUrl = `http://127.0.0.1:${ports.sim}`;
    this.webhookUrl = `http://127.0.0.1:${ports.web}/api/github/webhooks`;
    const appFile = join(this.dir, "sandbox-app.json");
    const configFile = join(this.dir, "atelier.config.yml");
    writeFileSync(configFile, INSTANCE_CONFIG);
    const env = (extra: Record<string, string>) => (): NodeJS.ProcessEnv => ({
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CHECKPOINT_DISABLE: "1",
      DATABASE_URL: this.postgres.url,
      REDIS_URL: this.redis.url,
      ATELIER_SANDBOX_APP_FILE: appFile,
      ATELIER_CONFIG: configFile,
      ATELIER_PUBLIC_URL: `http://127.0.0.1:${ports.web}`,
      ATELIER_DEMO_DELAY_MS: "200",
      ...extra,
    });
    this.sim = new Child("simulator", "scripts/sim.ts", env({ SIM_PORT: String(ports.sim), SIM_APP_FILE: appFile, SIM_WEBHOOK_URL: this.webhookUrl }), join(this.dir, "sim.log"), /App credentials written/);
    this.web = new Child("web", "scripts/chaos/web-entry.ts", env({ CHAOS_WEB_PORT: String(ports.web) }), join(this.dir, "web.log"), /web ready/);
    this.workers = [1, 2].map((n) => {
      const workspace = join(this.dir, `workspace-${n}`);
      mkdirSync(workspace, { recursive: true });
      return new Child(`worker-${n}`, "jobs/worker.ts", env({ ATELIER_WORKSPACE: workspace }), join(this.dir, `worker-${n}.log`), /worker started/);
    });
  }

  static async start(): Promise<ChaosWorld> {
    const [postgres, redis] = await Promise.allSettled([startPrivateCluster(), startPrivateRedis()]);
    if (postgres.status === "rejected" || redis.status === "rejected") {
      // a start that failed half way leaves nothing behind
      if (postgres.status === "fulfilled") postgres.value.destroy();
      if (redis.status === "fulfilled") await redis.value.stop().catch(() => undefined);
      throw postgres.status === "rejected" ? postgres.reason : (redis as PromiseRejectedResult).reason;
    }
    const sim = await freePort();
    let web = await freePort();
    while (web === sim) web = await freePort();
    const world = new ChaosWorld(postgres.value, redis.value, { sim, web });
    world.db = new pg.Pool({ connectionString: postgres.value.url, max: 2 });
    world.db.on("error", () => undefined); // the cluster is stopped on purpose
    try {
      await world.sim.start();
      await world.web.start();
      for (const worker of world.workers) await worker.start();
      // a reconcile that listed the installation before a scenario's repository was added would
      // remove it again: the scenarios begin once each worker's first reconcile is done
      for (const worker of world.workers) await worker.logged(/installations reconciled/);
    } catch (err) {
      await world.close();
      throw err;
    }
    return world;
  }

  /** POST /_sim/control/<method>: the simulator's control API. */
  async control<T = unknown>(method: string, input: Record<string, unknown> = {}): Promise<T> {
    const response = await fetch(`${this.simUrl}/_sim/control/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
    if (!response.ok) throw new Error(`sim ${method}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** Runs `act` with every webhook it causes lost (sent to no URL, as to an unreachable receiver). */
  async withWebhooksLost<T>(act: () => Promise<T>): Promise<T> {
    await this.control("pauseWebhooks");
    await this.control("setWebhookUrl", { url: null });
    try {
      return await act();
    } finally {
      await this.control("resumeWebhooks");
      await this.control("waitForWebhooks");
      await this.control("setWebhookUrl", { url: this.webhookUrl });
    }
  }

  async close(): Promise<void> {
    for (const worker of this.workers) await worker.stop().catch(() => undefined);
    await this.web.kill();
    await this.sim.kill();
    await this.db.end().catch(() => undefined);
    await this.redis.stop().catch(() => undefined);
    this.postgres.destroy();
  }
}
