// The first webhook after a start, as under `npm start`: a fresh simulator (the demo world)
// holds its deliveries until the dashboard listens; `next start` (the production build) then
// receives them. BENCH first_webhook_ms: how long the dashboard took to answer the first one
// (installation.created: verified, the installation and its repositories registered, a poll
// asked for) — GitHub gives up after 10 s; the goal is under a second. RATIO
// first_webhook_vs_warm: that time over the median of the deliveries after it, on the same
// start. The median of ROUNDS starts.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { writeSandboxAppFile } from "../../lib/sandbox/app-file";
import { startSimulator, type Simulator } from "../../lib/sandbox/index";
import { needsBuild } from "../../lib/supervisor/needs-build";
import { freePort } from "../../test/support/free-port";
import { bench, median, ratio } from "./measure";

const ROUNDS = 3;
const ROOT = resolve(import.meta.dirname, "../..");
const NEXT = join(ROOT, "node_modules", "next", "dist", "bin", "next");

async function until(what: string, probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`first-webhook bench: ${what} not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise((res) => {
    if (child.exitCode !== null || !child.pid) return res();
    child.once("exit", () => res());
    process.kill(-child.pid, "SIGTERM");
  });
}

async function oneStart(databaseUrl: string, dir: string, round: number): Promise<{ firstMs: number; warmMs: number }> {
  const port = await freePort();
  const appFile = join(dir, `sandbox-app-${round}.json`);
  const sim: Simulator = await startSimulator({ seed: "demo", webhookUrl: `http://127.0.0.1:${port}/api/github/webhooks`, holdWebhooksUntilReceiverListens: true });
  await writeSandboxAppFile(sim, appFile);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    ATELIER_REDIS_PREFIX: `bench-first-webhook-${process.pid}-${round}`,
    AUTH_SECRET: `bench-first-webhook-${process.pid}-0123456789abcdef`,
    ATELIER_SANDBOX_APP_FILE: appFile,
    ATELIER_PUBLIC_URL: `http://localhost:${port}`,
    ATELIER_WORKSPACE: join(dir, "workspaces"),
    PORT: String(port),
  };
  for (const key of ["GITHUB_APP_ID", "AUTH_URL", "NEXTAUTH_URL"]) delete env[key];
  const web = spawn(process.execPath, [NEXT, "start", "-p", String(port)], { cwd: ROOT, env, stdio: "ignore", detached: true });
  try {
    await until("every held delivery answered", () => sim.deliveries().every((d) => d.status !== "queued"), 120_000);
    const [first, ...later] = sim.deliveries();
    if (!first || first.status !== "delivered") throw new Error(`first-webhook bench: the first delivery ${first?.event}.${first?.action} was ${first?.status} ${first?.statusCode ?? first?.error ?? ""}`);
    return { firstMs: first.durationMs ?? NaN, warmMs: median(later.map((d) => d.durationMs ?? NaN)) };
  } finally {
    await stopGroup(web);
    await sim.close();
  }
}

export async function firstWebhookBench(databaseUrl: string): Promise<void> {
  if (needsBuild(ROOT)) {
    console.log("# first-webhook: building the dashboard (next build)");
    execFileSync(process.execPath, [NEXT, "build"], { cwd: ROOT, stdio: "ignore", env: { ...process.env, NODE_ENV: "production" } });
  }
  const dir = mkdtempSync(join(tmpdir(), "bench-first-webhook-"));
  try {
    const rounds: { firstMs: number; warmMs: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push(await oneStart(databaseUrl, dir, round));
    const first = median(rounds.map((r) => r.firstMs));
    bench("first_webhook_ms", first, "ms");
    ratio("first_webhook_vs_warm", first / median(rounds.map((r) => r.warmMs)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
