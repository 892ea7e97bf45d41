import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { DEMO_PROJECT_FILES } from "../../lib/sandbox/demo-project";
import { buildDashboardIfNeeded, freshDatabase, start, startDashboard, startSimulator, stackEnv, stopChildren, waitFor } from "../../e2e/global-setup";
import { freePort } from "../../test/support/free-port";
import { bench, percentile } from "./measure";

/**
 * From a label to the agent holding its prompt, on the real stack: the GitHub simulator (its
 * webhooks), `next start` (the web process that receives them) and the worker (jobs/worker.ts),
 * each its own process, as `npm start` runs them. The repository is the demo project (setup:
 * npm ci, warm: its snapshot was kept by a first Run), its Loop asks no approval, the agent is
 * the built-in demo agent in its sandbox. Each sample: a writer labels an issue in the simulator
 * (t0); the end is the transcript line the agent prints once it has read its prompt, stamped by
 * the worker as it reads it. One sample at a time, each Run finished before the next label.
 */

const SAMPLES = 20;
const OWNER = "demo-org";
const REPO = `${OWNER}/latency`;
const HOLDS_PROMPT = "demo agent: received a prompt";
const CONFIG = `labels:
  - { name: ready-for-agent, color: 0e8a16 }
environment:
  setup: npm ci
loops:
  start-dev:
    on: issues
    if: contains(item.labels.*.name, 'ready-for-agent') && item.state == 'open'
    agent: demo
    approval: none
    prompt: |
      Implement issue #\${{ item.number }}: \${{ item.title }} [demo:delay 0]
`;

export async function labelLatencyBench(url: string): Promise<void> {
  const databaseUrl = new URL(url);
  databaseUrl.pathname = `${databaseUrl.pathname}_latency`;
  await freshDatabase(databaseUrl.toString());
  const redisUrl = process.env.BENCH_LATENCY_REDIS_URL ?? `${(process.env.REDIS_URL ?? "redis://127.0.0.1:6379").replace(/\/\d+$/, "")}/11`;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  await redis.flushdb();
  await redis.quit();

  const dir = mkdtempSync(join(tmpdir(), "atelier-bench-latency-"));
  const config = join(dir, "atelier.config.yml");
  writeFileSync(config, "agents:\n  demo:\n    command: [atelier-demo-agent]\npoll_interval_seconds: 60\n");
  const [webPort, simPort] = [await freePort(), await freePort()];
  const appFile = join(dir, "sim-app.json");
  const env: NodeJS.ProcessEnv = { ...stackEnv({ databaseUrl: databaseUrl.toString(), redisUrl, webPort, appFile, config }), ATELIER_WORKSPACE: join(dir, "workspaces") };
  const children: ChildProcess[] = [];
  const db = new pg.Pool({ connectionString: databaseUrl.toString(), max: 2 });
  try {
    const simUrl = await startSimulator("bench-simulator", simPort, appFile, webPort, env, children);
    buildDashboardIfNeeded(env);
    await startDashboard("bench-next", webPort, env, children);
    const worker = start("bench-worker", ["tsx", "jobs/worker.ts"], env);
    children.push(worker.child);

    const control = async <T>(method: string, input: Record<string, unknown>): Promise<T> => {
      const res = await fetch(`${simUrl}/_sim/control/${method}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
      if (!res.ok) throw new Error(`${method}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    await control("createRepo", { owner: OWNER, name: "latency", files: { ...DEMO_PROJECT_FILES, ".github/atelier.yml": CONFIG } });
    await control("setUserPermission", { repo: REPO, login: "octo-admin", permission: "admin" });
    await control("createLabel", { repo: REPO, name: "ready-for-agent", color: "0e8a16" });
    await control("addRepository", { repo: REPO });

    /** Labels a new issue; resolves to the ms from the label to the agent holding its prompt. */
    const sample = async (title: string): Promise<number> => {
      const issue = await control<{ number: number }>("createIssue", { repo: REPO, title, login: "octo-admin" });
      const t0 = Date.now();
      await control("addLabels", { repo: REPO, number: issue.number, labels: ["ready-for-agent"], login: "octo-admin" });
      let heldAt: number | null = null;
      await waitFor(`the agent of ${REPO}#${issue.number}`, async () => {
        const row = (await db.query<{ at: Date }>(`SELECT t.at FROM transcript_entries t JOIN runs r ON r.id = t.run_id WHERE r.repo = $1 AND r.number = $2 AND t.text LIKE $3 ORDER BY t.id LIMIT 1`, [REPO, issue.number, `${HOLDS_PROMPT}%`])).rows[0];
        heldAt = row ? row.at.getTime() : null;
        return heldAt !== null;
      }, worker.child, 120_000, worker.log);
      await waitFor(`the Run of ${REPO}#${issue.number} to end`, async () => {
        const run = (await db.query<{ state: string }>(`SELECT state FROM runs WHERE repo = $1 AND number = $2`, [REPO, issue.number])).rows[0];
        return run !== undefined && ["Succeeded", "Failed", "Canceled"].includes(run.state);
      }, worker.child, 120_000, worker.log);
      return heldAt! - t0;
    };

    // the first Run keeps the snapshot: every sample after it starts warm
    const cold = await sample("Warm the environment");
    console.log(`# label_to_agent_start: the first (cold, setup run) ${cold} ms`);
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) samples.push(await sample(`Sample ${i}`));
    console.log(`# label_to_agent_start: ${SAMPLES} warm samples (ms): ${samples.join(" ")}`);
    bench("label_to_agent_start_p50_ms", percentile(samples, 50), "ms");
    bench("label_to_agent_start_p99_ms", percentile(samples, 99), "ms");
  } finally {
    await db.end();
    await stopChildren(children);
    rmSync(dir, { recursive: true, force: true });
  }
}
